"""The errors the MCP bridge adds to the `ToolError` family.

```
ToolError
├── MCPBridgeError (neuron_tool.errors)     the bridge cannot reach, list or call its server
│   ├── MCPConnectionError                  the server did not start, was not reached, or was lost
│   └── MCPTimeoutError(..., TimeoutError)  the server did not answer in time
└── MCPToolError                            the server's tool answered with an error result
```
"""

from __future__ import annotations

from ..errors import MCPBridgeError, ToolError


class MCPConnectionError(MCPBridgeError):
    """Raised when an MCP server cannot be started or reached, or the session with it is lost.

    `stderr` holds the last lines a stdio server wrote to its stderr (empty for
    HTTP servers), which usually say why it stopped.
    """

    def __init__(self, server: str, message: str, *, stderr: str = "") -> None:
        self.server = server
        self.stderr = stderr
        tail = f"\nlast lines of its stderr:\n{stderr}" if stderr else ""
        super().__init__(f"{message}{tail}")


class MCPTimeoutError(MCPBridgeError, TimeoutError):
    """Raised when an MCP server does not answer a request (`what`) within `seconds`.

    `stderr` is as for `MCPConnectionError`: a server stuck at start-up often says why there.
    """

    def __init__(self, server: str, what: str, seconds: float, *, stderr: str = "") -> None:
        self.server = server
        self.what = what
        self.seconds = seconds
        self.stderr = stderr
        tail = f"\nlast lines of its stderr:\n{stderr}" if stderr else ""
        super().__init__(f"MCP server {server!r} did not answer {what} within {seconds:g} s{tail}")


class MCPToolError(ToolError):
    """Raised when an MCP server's tool answers with an error result (`isError`).

    The message is the tool's own text, so the model reads what the tool said.
    """

    def __init__(self, server: str, tool: str, message: str) -> None:
        self.server = server
        self.tool = tool
        self.message = message
        super().__init__(f"MCP tool {tool!r} reported an error: {message}")
