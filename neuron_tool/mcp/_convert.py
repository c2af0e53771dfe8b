"""Conversions between MCP's wire types and `neuron_tool`'s: names, annotations and results."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from typing import Final, cast

import mcp_types as types
from pydantic import JsonValue

from ..tool import ToolAnnotations, ToolDyn
from .errors import MCPToolError

# Characters the registry refuses in a tool name; MCP allows a few more ('.', '/').
_NOT_IN_NAME: Final = re.compile(r"[^A-Za-z0-9_-]")


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
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.type}: {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, types.ResourceLink):
        return f"[resource: {block.uri}{_mime(block.mime_type)}]"
    contents = block.resource
    if isinstance(contents, types.TextResourceContents):
        return f"[resource: {contents.uri}{_mime(contents.mime_type)}]\n{contents.text}"
    size = _decoded_size(contents.blob)
    return f"[resource: {contents.uri}{_mime(contents.mime_type)}, {size} bytes]"


def _mime(mime_type: str | None) -> str:
    return f" ({mime_type})" if mime_type else ""


def _decoded_size(data: str) -> int | str:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return "?"


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
    value: JsonValue, *, schema_advertised: bool, modern: bool
) -> types.CallToolResult:
    """The `CallToolResult` for a tool's JSON result: text, and structured content when allowed.

    Sessions before 2026-07-28 take only objects as structured content. Newer
    ones take any JSON, sent for anything but plain text unless an output
    schema was advertised, in which case the client requires it.
    """
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if modern:
        structured = value if schema_advertised or not isinstance(value, str) else None
    else:
        structured = value if isinstance(value, dict) else None
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured
    )


def error_result(message: str) -> types.CallToolResult:
    """An `isError` result carrying `message`, for the client's model to read."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
