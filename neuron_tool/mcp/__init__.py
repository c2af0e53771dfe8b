"""The MCP bridge: tools from any MCP server as `ToolDyn`s, and a `ToolRegistry` served over MCP."""

from .client import MCPClient
from .elicitation import Elicitation, ElicitationAnswer, ElicitationHandler
from .endpoint import Endpoint, HttpEndpoint, StdioCommand
from .errors import (
    MCPConnectionError,
    MCPConnectTimeoutError,
    MCPElicitationError,
    MCPRequestError,
    MCPResponseTooLargeError,
    MCPTimeoutError,
    MCPToolError,
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
    "MCPTimeoutError",
    "MCPTool",
    "MCPToolError",
    "StdioCommand",
    "mcp_server",
    "mcp_tools",
    "serve_http",
    "serve_stdio",
]
