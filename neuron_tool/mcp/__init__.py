"""The MCP bridge: tools from any MCP server as `ToolDyn`s, and a `ToolRegistry` served over MCP.

`MCPClient` also lists a server's prompts and resources and gets them as layer0
content (`MCPPromptMessages`, `MCPResourceContents`).

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
    MCPInvalidAnswerError,
    MCPMissingArgumentError,
    MCPPromptArgumentError,
    MCPRequestError,
    MCPResponseTooLargeError,
    MCPSamplingError,
    MCPTimeoutError,
    MCPToolError,
    MCPUndeclaredArgumentError,
    MCPUnknownPromptError,
)
from .prompts import MCPPrompt, MCPPromptArgument, MCPPromptMessage, MCPPromptMessages
from .resources import MCPResource, MCPResourceContents, MCPResourceTemplate
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
    "MCPInvalidAnswerError",
    "MCPMissingArgumentError",
    "MCPPrompt",
    "MCPPromptArgument",
    "MCPPromptArgumentError",
    "MCPPromptMessage",
    "MCPPromptMessages",
    "MCPRequestError",
    "MCPResource",
    "MCPResourceContents",
    "MCPResourceTemplate",
    "MCPResponseTooLargeError",
    "MCPSamplingError",
    "MCPTimeoutError",
    "MCPTool",
    "MCPToolError",
    "MCPUndeclaredArgumentError",
    "MCPUnknownPromptError",
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
