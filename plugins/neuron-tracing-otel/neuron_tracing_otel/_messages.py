"""Messages in the JSON shapes of the GenAI conventions (`gen_ai.input.messages` and kin).

Only used when content capture is on; each string is cut as `_bounded`
says. Images and documents, a tool result's files among them, are named
(media type, a document's file name), never copied into a span;
provider-specific raw parts are named by their provider only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import JsonValue

from neuron_tool import ToolSchema
from neuron_turn import (
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

from ._bounded import bounded_json
from ._semconv import FINISH_REASON


def dumps(value: JsonValue) -> str:
    """JSON text for a span attribute: compact, non-ASCII kept as is, each string `bounded`."""
    return json.dumps(bounded_json(value), ensure_ascii=False, separators=(",", ":"), default=str)


def input_messages(messages: Sequence[ProviderMessage]) -> list[JsonValue]:
    """The chat history sent to the model, oldest first."""
    return [_message(message) for message in messages]


def output_messages(content: Sequence[ContentPart], stop_reason: str) -> list[JsonValue]:
    """The model's answer as the one output message (choice) it is."""
    return [
        {
            "role": "assistant",
            "parts": [_part(part) for part in content],
            "finish_reason": FINISH_REASON.get(stop_reason, stop_reason),
        }
    ]


def system_instructions(system: str) -> list[JsonValue]:
    """The system prompt as the conventions' list of text parts."""
    return [{"type": "text", "content": system}]


def tool_definitions(tools: Sequence[ToolSchema]) -> list[JsonValue]:
    """The tools offered to the model."""
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        }
        for tool in tools
    ]


def _message(message: ProviderMessage) -> JsonValue:
    content = message.content
    # Tool results travel in a user message here; the conventions give them a role.
    tool = bool(content) and all(isinstance(part, ToolResultPart) for part in content)
    return {"role": "tool" if tool else message.role, "parts": [_part(part) for part in content]}


def _part(part: ContentPart) -> JsonValue:
    if isinstance(part, TextPart):
        return {"type": "text", "content": part.text}
    if isinstance(part, ToolUsePart):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.input}
    if isinstance(part, ToolResultPart):
        return _result(part)
    if isinstance(part, ThinkingPart):
        return {"type": "reasoning", "content": part.thinking}
    if isinstance(part, ImagePart | DocumentPart):
        return _file(part)
    assert isinstance(part, RawPart)
    return {"type": "raw", "provider": part.provider}


def _result(part: ToolResultPart) -> JsonValue:
    result: dict[str, JsonValue] = {
        "type": "tool_call_response",
        "id": part.tool_use_id,
        "response": part.content,
    }
    if part.files:
        result["files"] = [_file(file) for file in part.files]
    return result


def _file(part: ImagePart | DocumentPart) -> JsonValue:
    if isinstance(part, ImagePart):
        return {"type": "image", "mime_type": part.media_type}
    if part.name is None:
        return {"type": "document", "mime_type": part.media_type}
    return {"type": "document", "mime_type": part.media_type, "name": part.name}
