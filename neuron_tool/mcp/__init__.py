"""The MCP bridge: tools from any MCP server as `ToolDyn`s, and a `ToolRegistry` served over MCP.

A server may ask, mid tool call, for what only the client has: a person's answer
(`elicitation`) or the client's model's words (`sampling`).
"""

from .client import MCPClient
from .elicitation import Elicitation, ElicitationAnswer, ElicitationHandler
from .endpoint import Endpoint, HttpEndpoint, StdioCommand
from .errors import (
    MCPConnectionError,
    MCPConnectTimeoutError,
    MCPElicitationError,
    MCPRequestError,
    MCPResponseTooLargeError,
    MCPSamplingError,
    MCPTimeoutError,
    MCPToolError,
)
from .sampling import (
    SamplingAnswer,
    SamplingContent,
    SamplingHandler,
    SamplingImage,
    SamplingMessage,
    SamplingRefused,
    SamplingRequest,
    charge_for_sampling,
)
from .server import mcp_server, serve_http, serve_stdio
from .tool import MCPTool
from .toolset import mcp_tools

__all__ = [
    "Elicitation",
    "ElicitationAnswer",
    "ElicitationHandler",
    "Endpoint",
    "HttpEndpoint",
    "MCPClient",
    "MCPConnectTimeoutError",
    "MCPConnectionError",
    "MCPElicitationError",
    "MCPRequestError",
    "MCPResponseTooLargeError",
    "MCPSamplingError",
    "MCPTimeoutError",
    "MCPTool",
    "MCPToolError",
    "SamplingAnswer",
    "SamplingContent",
    "SamplingHandler",
    "SamplingImage",
    "SamplingMessage",
    "SamplingRefused",
    "SamplingRequest",
    "StdioCommand",
    "charge_for_sampling",
    "mcp_server",
    "mcp_tools",
    "serve_http",
    "serve_stdio",
]
