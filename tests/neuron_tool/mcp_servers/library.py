"""An MCP server over stdio with prompts and resources (no tools), each listing two a page.

Prompts: `review` (arguments `code`, required, and `language`) answers a text and an
image message; `few_shot` a user, an assistant and a user message; `attachments` an
embedded text, an embedded PDF, audio and a resource link; `fails` a JSON-RPC error;
`hang` never answers; `big` answers `size` characters of text.

Resources: `memo://note` (text), `file:///pixel.png` and `file:///report.pdf`
(blobs), `data://both` (a text and a blob), `pid://self` (the process id),
`count://gets` (how many prompts/get it answered); `big://SIZE` is SIZE characters,
`hang://` never answers, any other uri is a JSON-RPC error.

Run it as a script: `python tests/neuron_tool/mcp_servers/library.py`; `library_server()`
is the same server in a test's process, to serve over HTTP.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

PAGE_SIZE = 2
IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
PDF = b"%PDF-1.7 a report"
AUDIO = bytes(16)
NOT_FOUND = -32002

_T = TypeVar("_T")

PROMPTS = [
    types.Prompt(
        name="review",
        title="Code review",
        description="Review a piece of code.",
        arguments=[
            types.PromptArgument(name="code", description="The code.", required=True),
            types.PromptArgument(name="language", description="Its language."),
        ],
    ),
    types.Prompt(name="few_shot", description="Arithmetic by example."),
    types.Prompt(name="attachments", description="Every other kind of content."),
    types.Prompt(name="fails", description="Answers with an error."),
    types.Prompt(name="hang", description="Never answers."),
    types.Prompt(
        name="big",
        description="Answers `size` characters.",
        arguments=[types.PromptArgument(name="size", required=True)],
    ),
]

RESOURCES = [
    types.Resource(uri="memo://note", name="note", title="A note", mime_type="text/plain", size=8),
    types.Resource(uri="file:///pixel.png", name="pixel", mime_type="image/png"),
    types.Resource(uri="file:///report.pdf", name="report", description="The Q3 report."),
    types.Resource(uri="data://both", name="both"),
    types.Resource(uri="pid://self", name="pid"),
]

TEMPLATES = [
    types.ResourceTemplate(uri_template="memo://{name}", name="memo", mime_type="text/plain"),
    types.ResourceTemplate(
        uri_template="big://{size}", name="big", title="Big", description="SIZE characters."
    ),
    types.ResourceTemplate(uri_template="file:///{path}", name="file"),
]

_gets = 0


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _page(items: Sequence[_T], params: types.PaginatedRequestParams | None) -> tuple[Any, Any]:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE_SIZE
    return list(items[start:end]), (str(end) if end < len(items) else None)


async def list_prompts(
    context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    prompts, cursor = _page(PROMPTS, params)
    return types.ListPromptsResult(prompts=prompts, next_cursor=cursor)


async def get_prompt(
    context: ServerRequestContext[Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    global _gets
    _gets += 1
    arguments = params.arguments or {}
    if params.name == "review":
        language = arguments.get("language", "Python")
        text = f"Review this {language} code:\n{arguments['code']}"
        return types.GetPromptResult(
            description="A review.",
            messages=[
                _message("user", types.TextContent(text=text)),
                _message("user", types.ImageContent(data=_b64(IMAGE), mime_type="image/png")),
            ],
        )
    if params.name == "few_shot":
        return types.GetPromptResult(
            messages=[
                _message("user", types.TextContent(text="2+2?")),
                _message("assistant", types.TextContent(text="4")),
                _message("user", types.TextContent(text="3+3?")),
            ]
        )
    if params.name == "attachments":
        return types.GetPromptResult(messages=[_message("user", block) for block in _attached()])
    if params.name == "fails":
        raise MCPError(-32602, "the prompt broke")
    if params.name == "hang":
        await anyio.sleep_forever()
    if params.name == "big":
        size = int(arguments["size"])
        return types.GetPromptResult(
            messages=[_message("user", types.TextContent(text="x" * size))]
        )
    raise MCPError(-32602, f"no prompt {params.name}")


def _message(role: types.Role, content: types.ContentBlock) -> types.PromptMessage:
    return types.PromptMessage(role=role, content=content)


def _attached() -> list[types.ContentBlock]:
    note = types.TextResourceContents(uri="memo://note", mime_type="text/plain", text="remember")
    pdf = types.BlobResourceContents(
        uri="file:///report.pdf", mime_type="application/pdf", blob=_b64(PDF)
    )
    return [
        types.EmbeddedResource(resource=note),
        types.EmbeddedResource(resource=pdf),
        types.AudioContent(data=_b64(AUDIO), mime_type="audio/wav"),
        types.ResourceLink(name="site", uri="https://example.com/", mime_type="text/html"),
    ]


async def list_resources(
    context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    resources, cursor = _page(RESOURCES, params)
    return types.ListResourcesResult(resources=resources, next_cursor=cursor)


async def list_resource_templates(
    context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    templates, cursor = _page(TEMPLATES, params)
    return types.ListResourceTemplatesResult(resource_templates=templates, next_cursor=cursor)


async def read_resource(
    context: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = params.uri
    if uri.startswith("big://"):
        return _read(types.TextResourceContents(uri=uri, text="x" * int(uri[len("big://") :])))
    if uri == "hang://":
        await anyio.sleep_forever()
    if uri == "pid://self":
        return _read(types.TextResourceContents(uri=uri, text=str(os.getpid())))
    if uri == "count://gets":
        return _read(types.TextResourceContents(uri=uri, text=str(_gets)))
    if uri == "memo://note":
        return _read(types.TextResourceContents(uri=uri, mime_type="text/plain", text="remember"))
    if uri == "file:///pixel.png":
        return _read(types.BlobResourceContents(uri=uri, mime_type="image/png", blob=_b64(IMAGE)))
    if uri == "file:///report.pdf":
        pdf = types.BlobResourceContents(uri=uri, mime_type="application/pdf", blob=_b64(PDF))
        return _read(pdf)
    if uri == "data://both":
        text = types.TextResourceContents(uri="data://both/text", text="hello")
        blob = types.BlobResourceContents(uri="data://both/bytes", blob=_b64(b"\x00\x01"))
        return types.ReadResourceResult(contents=[text, blob])
    raise MCPError(NOT_FOUND, f"Resource not found: {uri}")


def _read(
    contents: types.TextResourceContents | types.BlobResourceContents,
) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[contents])


def library_server() -> Server[Any]:
    """The library's handlers as a low-level server, for stdio here or HTTP in a test."""
    return Server(
        "library",
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
    )


async def main() -> None:
    server = library_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
