"""An MCP server over stdio whose tools exercise the bridge: every content kind, errors,
structured output, a hang, a crash, its pid and environment, tools/list three to a page.

Run it as a script: `python tests/neuron_tool/mcp_servers/toolbox.py`.
"""

from __future__ import annotations

import base64
import os
import signal
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PAGE_SIZE = 3
# 1234 bytes, a PNG by its signature: an image is the type its bytes say.
IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4 + bytes(202)
AUDIO = bytes(100)
BLOB = bytes(10)

_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
_TEXT_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
_SAFE = types.ToolAnnotations(title="Echo", read_only_hint=True, idempotent_hint=True)
_WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
}

TOOLS = [
    types.Tool(
        name="echo", description="Echo the text.", input_schema=_TEXT_INPUT, annotations=_SAFE
    ),
    types.Tool(
        name="weather",
        description="Structured weather.",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        output_schema=_WEATHER_SCHEMA,
    ),
    types.Tool(name="media", description="Every kind of content.", input_schema=_OBJECT),
    types.Tool(name="fail", description="Always reports an error.", input_schema=_OBJECT),
    types.Tool(name="sleep_forever", description="Never answers.", input_schema=_OBJECT),
    types.Tool(
        name="pid",
        description="The server's process id.",
        input_schema=_OBJECT,
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(name="crash", description="Kills its own process.", input_schema=_OBJECT),
    types.Tool(name="dotted.name", title="Dotted", input_schema=_OBJECT),
    types.Tool(
        name="environment", description="Its cwd and $TOOLBOX_SECRET.", input_schema=_OBJECT
    ),
]


async def list_tools(
    context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE_SIZE
    next_cursor = str(end) if end < len(TOOLS) else None
    return types.ListToolsResult(tools=TOOLS[start:end], next_cursor=next_cursor)


async def call_tool(
    context: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    arguments = params.arguments or {}
    name = params.name
    if name == "echo":
        return _text(arguments["text"])
    if name == "weather":
        weather = {"city": arguments.get("city", "Paris"), "celsius": 21.5}
        return types.CallToolResult(
            content=[types.TextContent(text="sunny")], structured_content=weather
        )
    if name == "media":
        return types.CallToolResult(content=_media())
    if name == "fail":
        return types.CallToolResult(
            content=[types.TextContent(text="the disk is full")], is_error=True
        )
    if name == "sleep_forever":
        await anyio.sleep_forever()
    if name == "pid":
        return _text(str(os.getpid()))
    if name == "crash":
        print("toolbox: crashing on purpose", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    if name == "environment":
        return _text(f"{os.getcwd()}|{os.environ.get('TOOLBOX_SECRET', '')}")
    return _text(f"called {name}")


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _media() -> list[types.ContentBlock]:
    return [
        types.TextContent(text="Here is everything:"),
        types.ImageContent(data=_b64(IMAGE), mime_type="image/png"),
        types.AudioContent(data=_b64(AUDIO), mime_type="audio/wav"),
        types.ResourceLink(
            name="report", uri="file:///srv/report.pdf", mime_type="application/pdf"
        ),
        types.EmbeddedResource(
            resource=types.TextResourceContents(
                uri="memo://note", mime_type="text/plain", text="remember"
            )
        ),
        types.EmbeddedResource(
            resource=types.BlobResourceContents(uri="memo://blob", blob=_b64(BLOB))
        ),
    ]


async def main() -> None:
    server = Server("toolbox", on_list_tools=list_tools, on_call_tool=call_tool)
    print("toolbox: ready", file=sys.stderr, flush=True)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
