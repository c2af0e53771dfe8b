"""The MCP bridge: tools from any MCP server as `ToolDyn`s, and a `ToolRegistry` served over MCP.

`MCPClient` also lists a server's prompts and resources and gets them as layer0
content (`MCPPromptMessages`, `MCPResourceContents`), caches its listings until the
server says a list changed (and tells `on_list_changed`: `MCPListChange`), hears of
changes to resources it subscribed to (`MCPResourceUpdate`), reopens the streams
those changes come on as `StreamBackoff` says, and asks for an argument's
completions (`MCPCompletion`). It is a tool source: among a turn's tools
it gives each run the server's tools of the moment; `mcp_servers` connects several.

A server may ask, mid tool call, for what only the client has: a person's answer
(`elicitation`) or the client's model's words (`sampling`).
"""

from ._backoff import StreamBackoff
from .client import MCPClient
from .completions import MCPCompletion
from .elicitation import Elicitation, ElicitationAnswer, ElicitationHandler
from .endpoint import Endpoint, HttpEndpoint, StdioCommand
from .errors import (
    MCPCapabilityError,
    MCPConnectionError,
    MCPConnectTimeoutError,
    MCPElicitationError,
    MCPInvalidAnswerError,
    MCPMissingArgumentError,
    MCPPromptArgumentError,
    MCPRequestError,
    MCPResponseTooLargeError,
    MCPSamplingError,
    MCPSubscriptionClosedError,
    MCPSubscriptionFinalError,
    MCPSubscriptionGaveUpError,
    MCPSubscriptionRefusedError,
    MCPTimeoutError,
    MCPToolError,
    MCPUndeclaredArgumentError,
    MCPUnknownPromptError,
)
from .list_changes import ListChangeHandler, MCPListChange
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
from .subscriptions import MCPResourceUpdate, ResourceUpdateHandler
from .tool import MCPTool
from .toolset import mcp_servers, mcp_tools

__all__ = [
    "Elicitation",
    "ElicitationAnswer",
    "ElicitationHandler",
    "Endpoint",
    "HttpEndpoint",
    "ListChangeHandler",
    "MCPCapabilityError",
    "MCPClient",
    "MCPCompletion",
    "MCPConnectTimeoutError",
    "MCPConnectionError",
    "MCPElicitationError",
    "MCPInvalidAnswerError",
    "MCPListChange",
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
    "MCPResourceUpdate",
    "MCPResponseTooLargeError",
    "MCPSamplingError",
    "MCPSubscriptionClosedError",
    "MCPSubscriptionFinalError",
    "MCPSubscriptionGaveUpError",
    "MCPSubscriptionRefusedError",
    "MCPTimeoutError",
    "MCPTool",
    "MCPToolError",
    "MCPUndeclaredArgumentError",
    "MCPUnknownPromptError",
    "ResourceUpdateHandler",
    "SamplingAnswer",
    "SamplingContent",
    "SamplingHandler",
    "SamplingImage",
    "SamplingMessage",
    "SamplingRefused",
    "SamplingRequest",
    "StdioCommand",
    "StreamBackoff",
    "charge_for_sampling",
    "mcp_server",
    "mcp_servers",
    "mcp_tools",
    "serve_http",
    "serve_stdio",
]
