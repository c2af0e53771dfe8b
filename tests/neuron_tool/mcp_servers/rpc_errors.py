"""An MCP server over stdio whose tools answer with JSON-RPC errors, or with text of a given size.

`fail` raises the SDK's `MCPError` with the code and message it is given (-32000
is the code the SDK also uses for a closed connection); `text` answers `size`
bytes of text. Run it as a script: `python tests/neuron_tool/mcp_servers/rpc_errors.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

TOOLS = [
    types.Tool(
        name="fail",
        description="Answer with the JSON-RPC error `code` and `message`.",
        input_schema={
            "type": "object",
            "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
            "required": ["code", "message"],
        },
    ),
    types.Tool(
        name="text",
        description="Answer `size` bytes of text in `blocks` content blocks.",
        input_schema={
            "type": "object",
            "properties": {"size": {"type": "integer"}, "blocks": {"type": "integer"}},
            "required": ["size"],
        },
    ),
]


async def list_tools(
    context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    context: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "fail":
        raise MCPError(int(arguments["code"]), str(arguments["message"]))
    size, blocks = int(arguments["size"]), int(arguments.get("blocks", 1))
    block = "x" * (size // blocks)
    return types.CallToolResult(content=[types.TextContent(text=block) for _ in range(blocks)])


async def main() -> None:
    server = Server("rpc-errors", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
