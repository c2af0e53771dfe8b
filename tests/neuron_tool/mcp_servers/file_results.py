"""An MCP server over stdio whose tools answer with files, as servers we did not write send them:
images and documents, base64 that does not decode, content that is no file for the model.

Run it as a script: `python tests/neuron_tool/mcp_servers/file_results.py`.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PNG = b"\x89PNG\r\n\x1a\n a screenshot"
PDF = b"%PDF-1.7 quarterly figures"
NOTES = b"buy milk\n"
SVG = b"<svg xmlns='http://www.w3.org/2000/svg'/>"
ZIP = b"PK\x03\x04 an archive"
NOT_BASE64 = "not base64!"

_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(name=name, description=description, input_schema=_OBJECT)
    for name, description in [
        ("screenshot", "A screenshot, a PDF and a plain-text file."),
        ("broken", "An image and a PDF whose base64 does not decode, and one good image."),
        ("only_broken", "An image whose base64 does not decode."),
        ("no_files", "Links, text, an SVG image and a zip: nothing a model is shown."),
        ("recording", "A call's audio, a clip and audio whose base64 does not decode."),
        ("structured_screenshot", "Structured content with a screenshot."),
    ]
]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _blob(uri: str, mime_type: str, blob: str) -> types.EmbeddedResource:
    contents = types.BlobResourceContents(uri=uri, mime_type=mime_type, blob=blob)
    return types.EmbeddedResource(resource=contents)


def _screenshot() -> list[types.ContentBlock]:
    return [
        types.TextContent(text="Your files:"),
        types.ImageContent(data=b64(PNG), mime_type="image/png"),
        _blob("file:///reports/q3%20figures.pdf", "application/pdf", b64(PDF)),
        _blob("memo://notes/todo.txt?rev=2", "text/plain; charset=utf-8", b64(NOTES)),
    ]


def _broken() -> list[types.ContentBlock]:
    return [
        types.ImageContent(data=NOT_BASE64, mime_type="image/png"),
        _blob("file:///bad.pdf", "application/pdf", NOT_BASE64),
        types.ImageContent(data=b64(PNG), mime_type="image/png"),
    ]


def _no_files() -> list[types.ContentBlock]:
    return [
        types.TextContent(text="Nothing to show:"),
        types.ResourceLink(name="r", uri="https://example.com/r.pdf", mime_type="application/pdf"),
        types.EmbeddedResource(
            resource=types.TextResourceContents(uri="memo://n", mime_type="text/plain", text="hi")
        ),
        types.ImageContent(data=b64(SVG), mime_type="image/svg+xml"),
        _blob("file:///a.zip", "application/zip", b64(ZIP)),
    ]


WAV = b"RIFF$\x00\x00\x00WAVEfmt "
MP4 = b"\x00\x00\x00\x18ftypisom a clip"


def _recording() -> list[types.ContentBlock]:
    return [
        types.AudioContent(data=b64(WAV), mime_type="audio/wav"),
        _blob("file:///clips/door.mp4", "video/mp4", b64(MP4)),
        types.AudioContent(data=NOT_BASE64, mime_type="audio/mpeg"),
    ]


def _content(name: str) -> list[types.ContentBlock]:
    if name == "recording":
        return _recording()
    if name == "screenshot":
        return _screenshot()
    if name == "broken":
        return _broken()
    if name == "only_broken":
        return _broken()[:1]
    return _no_files()


async def list_tools(
    context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    context: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name == "structured_screenshot":
        return types.CallToolResult(
            content=[types.TextContent(text='{"width": 2}'), *_screenshot()[1:2]],
            structured_content={"width": 2},
        )
    return types.CallToolResult(content=_content(params.name))


async def main() -> None:
    server = Server("file-results", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
