"""Conversion between layer0 content and the loop's internal message types.

Session history is stored as a JSON list of `{"role", "content"}` objects
(plus `"pinned": true` on a pinned message) whose content is layer0
Content, so any layer0 reader can show it. Thinking, provider-raw parts
and documents, which layer0 does not name, travel as custom blocks of
content types the loop owns, so they survive the round trip.
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
RAW_TYPE: Final = "neuron.raw"


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
    return [_part_from_block(block) for block in content.root]


def is_empty(content: Content) -> bool:
    """Whether a message body holds nothing: no part, or only empty text."""
    return all(isinstance(p, TextPart) and not p.text for p in parts_from_content(content))


def content_from_parts(parts: Sequence[ContentPart]) -> Content:
    """Return the parts as layer0 Content: a plain string when they are one text part."""
    if len(parts) == 1 and type(parts[0]) is TextPart and type(parts[0].text) is str:
        return trusted(Content, {"root": parts[0].text}, _ROOT)
    blocks = [_block_from_part(part) for part in parts]
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
