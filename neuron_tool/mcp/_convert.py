"""Conversions between MCP's wire types and `neuron_tool`'s: names, annotations and content.

A result's images and documents cross in both directions as files
(`ToolReturn`): MCP image content is an image, an embedded PDF or plain-text
blob a document; whatever else a server sends is described in the text. A
prompt's message takes the same conversion, block by block (`message_block`),
and a resource's blob is a file of its own media type (`blob_file`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from typing import Final, cast
from urllib.parse import quote, unquote

import mcp_types as types
from pydantic import JsonValue

from layer0 import Base64Source, ImageBlock, TextBlock, UrlSource

from ..errors import ToolFileError
from ..files import (
    IMAGE_TYPES,
    FileBlock,
    ToolReturn,
    document_of,
    image_type,
    source_document_block,
)
from ..tool import ToolAnnotations, ToolDyn
from .errors import MCPToolError

# Characters the registry refuses in a tool name; MCP allows a few more ('.', '/').
_NOT_IN_NAME: Final = re.compile(r"[^A-Za-z0-9_-]")
# The images and documents every provider that takes files at all can show;
# anything else would fail the model request after the call, so it stays text.
_DOCUMENT_TYPES: Final = frozenset({"application/pdf", "text/plain"})
# Where our server puts a document's bytes; the last segment is its name.
_DOCUMENT_URI: Final = "neuron:document/"
_NO_IMAGE: Final = "are no PNG, JPEG, GIF or WebP image"


def local_name(remote: str, *, prefix: str) -> str:
    """The name of a server's tool here: `prefix` plus its name, characters we refuse made `_`."""
    return prefix + _NOT_IN_NAME.sub("_", remote)


def from_mcp_annotations(annotations: types.ToolAnnotations | None) -> ToolAnnotations | None:
    """Our `ToolAnnotations` for MCP's, or `None` when the server sent none."""
    if annotations is None:
        return None
    return ToolAnnotations(
        title=annotations.title,
        read_only_hint=annotations.read_only_hint,
        destructive_hint=annotations.destructive_hint,
        idempotent_hint=annotations.idempotent_hint,
        open_world_hint=annotations.open_world_hint,
    )


def to_mcp_annotations(annotations: ToolAnnotations | None) -> types.ToolAnnotations | None:
    """MCP's `ToolAnnotations` for ours."""
    if annotations is None:
        return None
    return types.ToolAnnotations(
        title=annotations.title,
        read_only_hint=annotations.read_only_hint,
        destructive_hint=annotations.destructive_hint,
        idempotent_hint=annotations.idempotent_hint,
        open_world_hint=annotations.open_world_hint,
    )


def call_result(result: types.CallToolResult, *, server: str, tool: str) -> JsonValue | ToolReturn:
    """A tool call's result: `result_json`'s JSON, as a `ToolReturn` with its files if it has any.

    The images and PDF or plain-text blobs whose data decodes are the files;
    the text still mentions each, for a model whose provider cannot show them.

    Raises:
        MCPToolError: The server marked the result as an error (`isError`).
    """
    value = result_json(result, server=server, tool=tool)
    files = [file for block in result.content if (file := _file(block)) is not None]
    return ToolReturn(value, files=files) if files else value


def result_json(result: types.CallToolResult, *, server: str, tool: str) -> JsonValue:
    """The JSON result of a tool call: its structured content if any, else its content as text.

    Raises:
        MCPToolError: The server marked the result as an error (`isError`).
    """
    if result.is_error:
        raise MCPToolError(server, tool, content_text(result.content) or "(no message)")
    if result.structured_content is not None:
        return cast(JsonValue, result.structured_content)
    return content_text(result.content)


def content_text(content: Iterable[types.ContentBlock]) -> str:
    """Join the content blocks as text; what is not text is described rather than dropped."""
    return "\n".join(_block_text(block) for block in content)


def _block_text(block: types.ContentBlock) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        # Said when not shown: the model must not take the server's word that it sees one.
        shown = _image(block.data) is not None or not _claims_image(block.mime_type)
        return f"[image: {block.mime_type}, {_size(block.data, shown=shown)}]"
    if isinstance(block, types.AudioContent):
        return f"[{block.type}: {block.mime_type}, {_size(block.data)}]"
    if isinstance(block, types.ResourceLink):
        return f"[resource: {block.uri}{_mime(block.mime_type)}]"
    contents = block.resource
    if isinstance(contents, types.TextResourceContents):
        return f"[resource: {contents.uri}{_mime(contents.mime_type)}]\n{contents.text}"
    return f"[resource: {contents.uri}{_mime(contents.mime_type)}, {_size(contents.blob)}]"


def message_block(block: types.ContentBlock) -> TextBlock | FileBlock:
    """A content block as a message holds it: the file it is (as a tool result's), else its text.

    Text, resource links, embedded text and what no model API takes are the text
    `content_text` gives them; the data of a block that is a file is not checked
    here (`data_fault` tells).
    """
    file = _file(block)
    return file if file is not None else TextBlock(text=_block_text(block))


def data_fault(block: types.ContentBlock) -> str | None:
    """Why an image's, audio's or embedded blob's data is invalid; None if it is valid.

    Invalid: base64 that does not decode, or the bytes of what claims an image
    type a model API takes being no image of those (`image_fault`).
    """
    mime_type: str | None
    if isinstance(block, types.ImageContent | types.AudioContent):
        data, what, mime_type = block.data, f"its {block.type}", block.mime_type
    elif isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.BlobResourceContents
    ):
        contents = block.resource
        data, what = contents.blob, f"its embedded resource {contents.uri!r}"
        mime_type = contents.mime_type
    else:
        return None
    if not decodes(data):
        return f"the base64 data of {what} does not decode"
    return image_fault(data, mime_type, what)


def image_fault(data: str, mime_type: str | None, what: str) -> str | None:
    """Why `what`, base64 `data` that decodes, is no file of `mime_type`; None if it is one.

    It claims an image type a model API takes and its bytes are no image of
    those; which one they are need not match: an image's type is its bytes'.
    """
    if _claims_image(mime_type) and _image(data) is None:
        return f"the bytes of {what} ({mime_type}) {_NO_IMAGE}"
    return None


def blob_file(blob: str, mime_type: str | None, uri: str) -> FileBlock:
    """A resource's blob as a file: an image if its bytes are one, else a document of its type.

    Unlike a tool result's blob, every type is kept: the caller asked for these
    bytes, and a model API that cannot take them says so when sent them. An
    image's type is the one its bytes are, whatever `mime_type` claims: a model
    API refuses an image whose bytes are not its type (`image_fault` tells of a
    claimed image whose bytes are none).
    """
    image = _image(blob)
    if image is not None:
        return image
    media_type = _base_type(mime_type) or "application/octet-stream"
    return source_document_block(Base64Source(data=blob), media_type, _uri_name(uri))


def decodes(data: str) -> bool:
    """Whether `data` is base64 that decodes, by the test `ToolReturn` makes of a file."""
    return _decoded_size(data) is not None


def _mime(mime_type: str | None) -> str:
    return f" ({mime_type})" if mime_type else ""


def _size(data: str, *, shown: bool = True) -> str:
    size = _decoded_size(data)
    if size is None:
        return "its base64 data did not decode"
    return f"{size} bytes" if shown else f"{size} bytes, which {_NO_IMAGE}"


def _decoded_size(data: str) -> int | None:
    decoded = _decoded(data)
    return None if decoded is None else len(decoded)


def _decoded(data: str) -> bytes | None:
    # The same test `ToolReturn` makes of a file, so a block passing it is a valid file.
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _image(data: str) -> ImageBlock | None:
    """The image base64 `data` is, of the type its bytes say; None if they are no image.

    By the bytes, not the server's media type: that is only a claim, and a model
    API refuses the whole request holding an image whose bytes are not its type.
    """
    decoded = _decoded(data)
    media_type = None if decoded is None else image_type(decoded)
    if media_type is None:
        return None
    return ImageBlock(source=Base64Source(data=data), media_type=media_type)


def _claims_image(mime_type: str | None) -> bool:
    return _base_type(mime_type) in IMAGE_TYPES


def _file(block: types.ContentBlock) -> FileBlock | None:
    """The image, document, audio or video a content block is, for the model; None if none.

    Whether the model's API takes audio or video is its provider's to say: one
    that cannot show a tool's file tells the model so in its place.
    """
    if isinstance(block, types.ImageContent):
        return _image(block.data)
    if isinstance(block, types.AudioContent):
        media_type = _base_type(block.mime_type)
        if not media_type.startswith("audio/") or _decoded_size(block.data) is None:
            return None
        return source_document_block(Base64Source(data=block.data), media_type)
    if not isinstance(block, types.EmbeddedResource):
        return None
    contents = block.resource
    if not isinstance(contents, types.BlobResourceContents):
        return None  # text contents are in the result's text already
    media_type = _base_type(contents.mime_type)
    if not _is_file_type(media_type) or _decoded_size(contents.blob) is None:
        return None
    return blob_file(contents.blob, media_type, contents.uri)


def _is_file_type(media_type: str) -> bool:
    return media_type in _DOCUMENT_TYPES or media_type.startswith(("audio/", "video/"))


def _base_type(mime_type: str | None) -> str:
    # Providers match bare types: "text/plain; charset=utf-8" is "text/plain".
    return (mime_type or "").split(";", 1)[0].strip().lower()


def _uri_name(uri: str) -> str | None:
    # Split by hand: urlsplit raises on some malformed URIs, and servers are untrusted.
    segment = re.split(r"[?#]", uri, maxsplit=1)[0].rstrip("/").rsplit("/", 1)[-1]
    return unquote(segment) or None


def to_mcp_tool(tool: ToolDyn, *, modern: bool) -> types.Tool:
    """Describe one of our tools on the MCP wire.

    Before protocol 2026-07-28 an output schema must describe an object, so
    other output schemas are left out on older sessions.
    """
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=advertised_output_schema(tool, modern=modern),
        annotations=to_mcp_annotations(tool.annotations),
    )


def advertised_output_schema(tool: ToolDyn, *, modern: bool) -> dict[str, JsonValue] | None:
    """The output schema a session of this era may be shown, if any."""
    schema = tool.output_schema
    if schema is None or modern or schema.get("type") == "object":
        return schema
    return None


def success_result(
    value: JsonValue | ToolReturn,
    *,
    schema_advertised: bool,
    modern: bool,
    resource_links: bool = True,
) -> types.CallToolResult:
    """The `CallToolResult` for a tool's result: text, structured content when allowed, files.

    Sessions before 2026-07-28 take only objects as structured content. Newer
    ones take any JSON, sent for anything but plain text unless an output
    schema was advertised, in which case the client requires it. A
    `ToolReturn`'s value follows these rules, and each of its files follows the
    text (`_file_content`); `resource_links` says the session knows links.
    """
    files: tuple[FileBlock, ...] = ()
    if isinstance(value, ToolReturn):
        files = value.files
        value = value.value
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if modern:
        structured = value if schema_advertised or not isinstance(value, str) else None
    else:
        structured = value if isinstance(value, dict) else None
    content: list[types.ContentBlock] = [types.TextContent(text=text)]
    for index, file in enumerate(files):
        content.append(_file_content(file, index, links=resource_links))
    return types.CallToolResult(content=content, structured_content=structured)


def _file_content(file: FileBlock, index: int, *, links: bool) -> types.ContentBlock:
    """A file as MCP content: an image, audio, an embedded document, or a link to its URL.

    A document's URI is `neuron:document/` and its name (else its `index`).
    Without `links` (sessions before 2025-06-18) a URL is named in text.

    Raises:
        ToolFileError: `file` is neither an image nor a document block.
    """
    source, media_type, name = _file_parts(file, index)
    if isinstance(source, UrlSource):
        if not links:
            return types.TextContent(text=f"[file: {source.url} ({media_type})]")
        link_name = name or _uri_name(source.url) or source.url
        return types.ResourceLink(name=link_name, uri=source.url, mime_type=media_type)
    if isinstance(file, ImageBlock):
        return types.ImageContent(data=source.data, mime_type=media_type)
    if media_type.startswith("audio/"):
        return types.AudioContent(data=source.data, mime_type=media_type)
    uri = _DOCUMENT_URI + quote(name or str(index), safe="")
    blob = types.BlobResourceContents(uri=uri, mime_type=media_type, blob=source.data)
    return types.EmbeddedResource(resource=blob)


def _file_parts(file: FileBlock, index: int) -> tuple[Base64Source | UrlSource, str, str | None]:
    if isinstance(file, ImageBlock):
        return file.source, file.media_type, None
    document = document_of(file.data)
    if document is None:  # `ToolReturn` refuses such a file when it is made
        raise ToolFileError(index, "a document's data needs a source and a media_type")
    return document


def error_result(message: str) -> types.CallToolResult:
    """An `isError` result carrying `message`, for the client's model to read."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
