"""Conversion between layer0 content and the loop's internal message types.

Session history is stored as a JSON list of `{"role", "content"}` objects
(plus `"pinned": true` on a pinned message) whose content is layer0
Content, so any layer0 reader can show it. Thinking, provider-raw parts
and documents, which layer0 does not name, travel as custom blocks of
content types the loop owns, so they survive the round trip.

The files a tool returned with its result (`neuron_tool.ToolReturn`) follow
its `tool_result` block as one custom block naming the call, so a layer0
reader still sees a plain result with its text:

    {"type": "tool_result", "tool_use_id": "t1", "content": "Took it.", "is_error": false},
    {"type": "custom", "content_type": "neuron.tool_files",
     "data": {"tool_use_id": "t1", "files": [{"type": "image", ...}, ...]}}
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter, ValidationError

from layer0 import (
    Content,
    ContentBlock,
    CustomBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from neuron_tool.files import FileBlock

from ._trusted import is_plain_json, trusted
from .documents import DOCUMENT_TYPE, document_from_block, document_to_block
from .provider import (
    ContentPart,
    DocumentPart,
    ImagePart,
    ProviderMessage,
    RawPart,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)

logger = logging.getLogger("neuron_turn")

THINKING_TYPE: Final = "neuron.thinking"
"""The `content_type` of a stored history's custom block holding the model's thinking."""
RAW_TYPE: Final = "neuron.raw"
"""The `content_type` of a stored history's custom block holding a provider's opaque part."""
TOOL_FILES_TYPE: Final = "neuron.tool_files"
"""The `content_type` of a stored history's custom block holding the files a tool returned."""


class HistoryFormatError(ValueError):
    """Stored history does not have the shape this module writes."""


class _StoredMessage(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)
    role: Literal["user", "assistant"]
    content: Content
    pinned: bool = False


# Built when a history is first read, not at import.
_HISTORY: Final = TypeAdapter(list[_StoredMessage], config=ConfigDict(defer_build=True))


def parts_from_content(content: Content) -> list[ContentPart]:
    """Return the parts of a layer0 message body."""
    if isinstance(content.root, str):
        return [TextPart(content.root)]
    parts: list[ContentPart] = []
    for block in content.root:
        if type(block) is CustomBlock and block.content_type == TOOL_FILES_TYPE:
            with_files = _with_files(parts[-1] if parts else None, block.data)
            if with_files is not None:
                parts[-1] = with_files
                continue
        parts.append(_part_from_block(block))
    return parts


def is_empty(content: Content) -> bool:
    """Whether a message body holds nothing: no part, or only empty text."""
    return all(isinstance(p, TextPart) and not p.text for p in parts_from_content(content))


def content_from_parts(parts: Sequence[ContentPart]) -> Content:
    """Return the parts as layer0 Content: a plain string when they are one text part."""
    if len(parts) == 1 and type(parts[0]) is TextPart and type(parts[0].text) is str:
        return trusted(Content, {"root": parts[0].text}, _ROOT)
    blocks = [_block_from_part(part) for part in parts]
    if any(type(part) is ToolResultPart and part.files for part in parts):
        blocks = _with_file_blocks(parts, blocks)
    return trusted(Content, {"root": blocks}, _ROOT)  # each block is valid: so is the list


def history_from_json(value: JsonValue) -> list[ProviderMessage]:
    """Read stored history; raises `HistoryFormatError` saying what does not parse."""
    try:
        stored = _HISTORY.validate_python(value)
    except ValidationError as exc:
        raise HistoryFormatError(_first_error(exc)) from exc
    return [ProviderMessage(m.role, parts_from_content(m.content), m.pinned) for m in stored]


def history_to_json(messages: Sequence[ProviderMessage]) -> JsonValue:
    """Write history as stored in the session's `messages` key (system messages excluded).

    A pinned message carries `"pinned": true`; the key is left out otherwise,
    so unpinned history reads the same as before pins existed.
    """
    return [_stored(m) for m in messages if m.role != "system"]


def _stored(message: ProviderMessage) -> JsonValue:
    stored: dict[str, JsonValue] = {
        "role": message.role,
        "content": content_from_parts(message.content).model_dump(mode="json"),
    }
    if message.pinned:
        stored["pinned"] = True
    return stored


def _with_file_blocks(
    parts: Sequence[ContentPart], blocks: list[ContentBlock]
) -> list[ContentBlock]:
    """`blocks` with each result's files in a block right after the result's own."""
    out: list[ContentBlock] = []
    for part, block in zip(parts, blocks, strict=True):
        out.append(block)
        if type(part) is ToolResultPart and part.files:
            files: list[JsonValue] = [
                _block_from_part(file).model_dump(mode="json") for file in part.files
            ]
            data: JsonValue = {"tool_use_id": part.tool_use_id, "files": files}
            out.append(CustomBlock(content_type=TOOL_FILES_TYPE, data=data))
    return out


def _with_files(previous: ContentPart | None, data: JsonValue) -> ToolResultPart | None:
    """The result before a files block with its files; None if the block is not that result's.

    A files block that names another call, or holds what is not an image or
    document, is left to be read as an unknown custom block (its JSON as text),
    as any malformed custom block is: nothing in it is dropped.
    """
    if not isinstance(previous, ToolResultPart) or previous.files:
        return None
    if not isinstance(data, dict) or data.get("tool_use_id") != previous.tool_use_id:
        return None
    raw = data.get("files")
    if not isinstance(raw, list) or not raw:
        return None
    files: list[ImagePart | DocumentPart] = []
    for item in raw:
        file = _file_part(item)
        if file is None:
            return None
        files.append(file)
    return ToolResultPart(previous.tool_use_id, previous.content, previous.is_error, tuple(files))


def file_parts(files: Sequence[FileBlock]) -> tuple[ImagePart | DocumentPart, ...]:
    """The parts of the files a tool returned (checked when its `ToolReturn` was made)."""
    parts: list[ImagePart | DocumentPart] = []
    for file in files:
        if isinstance(file, ImageBlock):
            parts.append(ImagePart(file.source, file.media_type))
        else:
            document = document_from_block(file.data)
            assert document is not None, "ToolReturn checks its documents"
            parts.append(document)
    return tuple(parts)


def _file_part(item: JsonValue) -> ImagePart | DocumentPart | None:
    try:
        block = _FILE_BLOCK.validate_python(item)
    except ValidationError:
        return None
    if isinstance(block, ImageBlock):
        return ImagePart(block.source, block.media_type)
    if block.content_type == DOCUMENT_TYPE:
        return document_from_block(block.data)
    return None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "the value"
    return f"at {where}: {error['msg']}"


def _part_from_block(block: ContentBlock) -> ContentPart:
    if isinstance(block, TextBlock):
        return TextPart(block.text)
    if isinstance(block, ToolUseBlock):
        return ToolUsePart(block.id, block.name, block.input)
    if isinstance(block, ToolResultBlock):
        return ToolResultPart(block.tool_use_id, block.content, block.is_error)
    if isinstance(block, ImageBlock):
        return ImagePart(block.source, block.media_type)
    return _part_from_custom(block)


def _plain_result(part: ToolResultPart) -> bool:
    return (
        type(part.tool_use_id) is str and type(part.content) is str and type(part.is_error) is bool
    )


def _part_from_custom(block: CustomBlock) -> ContentPart:
    data = block.data
    if block.content_type == THINKING_TYPE and isinstance(data, dict):
        thinking, signature = data.get("thinking"), data.get("signature")
        if isinstance(thinking, str) and (signature is None or isinstance(signature, str)):
            return ThinkingPart(thinking, signature)
    if block.content_type == RAW_TYPE and isinstance(data, dict):
        provider = data.get("provider")
        if isinstance(provider, str):
            return RawPart(provider, data.get("data"))
    if block.content_type == DOCUMENT_TYPE:
        document = document_from_block(data)
        if document is not None:
            return document
    # No model API takes an arbitrary block; its JSON as text keeps the information.
    logger.warning(
        "custom content block %r has no model equivalent; sending its JSON as text",
        block.content_type,
    )
    return TextPart(block.model_dump_json())


def _block_from_part(part: ContentPart) -> ContentBlock:
    # Built trusted when every value has the type the block's field wants; a Python
    # provider's own objects (a tuple in a tool's input, say) meet validation instead,
    # which says what is wrong with them.
    if isinstance(part, TextPart):
        if type(part.text) is str:
            return trusted(TextBlock, {"type": "text", "text": part.text}, _TEXT_SET)
        return TextBlock(text=part.text)
    if isinstance(part, ToolUsePart):
        if type(part.id) is str and type(part.name) is str and is_plain_json(part.input):
            fields = {"type": "tool_use", "id": part.id, "name": part.name, "input": part.input}
            return trusted(ToolUseBlock, fields, _TOOL_USE_SET)
        return ToolUseBlock(id=part.id, name=part.name, input=part.input)
    if isinstance(part, ToolResultPart):
        if _plain_result(part):
            fields = {"type": "tool_result", "tool_use_id": part.tool_use_id}
            fields |= {"content": part.content, "is_error": part.is_error}
            return trusted(ToolResultBlock, fields, _TOOL_RESULT_SET)
        return ToolResultBlock(
            tool_use_id=part.tool_use_id, content=part.content, is_error=part.is_error
        )
    if isinstance(part, ImagePart):
        return ImageBlock(source=part.source, media_type=part.media_type)
    if isinstance(part, DocumentPart):
        return document_to_block(part)
    if isinstance(part, ThinkingPart):
        data: JsonValue = {"thinking": part.thinking, "signature": part.signature}
        return CustomBlock(content_type=THINKING_TYPE, data=data)
    return CustomBlock(content_type=RAW_TYPE, data={"provider": part.provider, "data": part.data})


_FILE_BLOCK: Final = TypeAdapter(ImageBlock | CustomBlock, config=ConfigDict(defer_build=True))
_ROOT: Final = frozenset({"root"})
_TEXT_SET: Final = frozenset({"text"})
_TOOL_USE_SET: Final = frozenset({"id", "name", "input"})
_TOOL_RESULT_SET: Final = frozenset({"tool_use_id", "content", "is_error"})

# `json.dumps` with keyword arguments builds a new encoder per call; this one is shared.
_COMPACT_JSON: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def json_text(value: JsonValue) -> str:
    """Return a tool result as the text the model sees: strings as they are, else JSON."""
    if isinstance(value, str):
        return value
    if type(value) is int:
        return str(value)  # what the encoder writes for an int (a bool is not one), faster
    return _COMPACT_JSON.encode(value)
