"""An MCP server over stdio whose tools ask the client questions mid-call (elicitation).

Each tool answers with the JSON of what the client said, or of the error it got:
`book` asks for a confirmation and a number of seats, `sign_in` sends the user
to a URL. It asks as MCP 2026-07-28 servers do: by answering "input required",
the client calling again with the answers.

Run it as a script: `python tests/neuron_tool/mcp_servers/elicits.py`.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

BOOKING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {"type": "boolean", "description": "Book them?"},
        "seats": {"type": "integer", "minimum": 1, "maximum": 8},
    },
    "required": ["confirm"],
}

_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(name=name, description=name, input_schema=_OBJECT) for name in ("book", "sign_in")
]


def _question(name: str) -> types.ElicitRequest:
    if name == "book":
        form = types.ElicitRequestFormParams(
            message="Book 2 seats on the 14th?", requested_schema=BOOKING
        )
        return types.ElicitRequest(params=form)
    visit = types.ElicitRequestURLParams(
        message="Sign in to the calendar", url="https://calendar.example/auth", elicitation_id="e1"
    )
    return types.ElicitRequest(params=visit)


async def list_tools(
    context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    context: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    # MCP 2026-07-28: the server asks by answering "input required", and the client
    # calls again with the answers.
    if not params.input_responses:
        return types.InputRequiredResult(input_requests={"q": _question(params.name)})
    answer = params.input_responses["q"]
    assert isinstance(answer, types.ElicitResult)
    said = {"action": answer.action, "content": answer.content}
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(said))])


async def main() -> None:
    server = Server("elicits", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
