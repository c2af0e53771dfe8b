"""Assemble a streamed chat completion (server-sent events) into one completion body.

Used by the `stream=True` option. The provider still returns one
`ProviderResponse`; streaming only keeps a long generation from hitting a
read timeout and lets servers that only stream be used. Chunks are folded
into the shape of a non-streamed body and read by `_wire.parse_completion`,
so both paths map content the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final

from pydantic import JsonValue

from ._errors import ApiError, api_error_from_json

_DATA: Final = "data:"
_DONE: Final = "[DONE]"


class StreamError(Exception):
    """The server sent an error object inside the stream."""

    def __init__(self, api_error: ApiError) -> None:
        super().__init__(api_error.message)
        self.api_error = api_error


class MalformedStreamError(ValueError):
    """A `data:` line that is not JSON."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


@dataclass(slots=True)
class _ToolCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass(slots=True)
class StreamAccumulator:
    """Folds `chat.completion.chunk` events, line by line, into one completion body."""

    model: str = ""
    content: str = ""
    reasoning: str = ""
    refusal: str = ""
    finish_reason: str | None = None
    usage: JsonValue = None
    tool_calls: dict[int, _ToolCall] = field(default_factory=dict)
    done: bool = False
    chunks: int = 0

    def feed_line(self, line: str) -> None:
        """Take one line of the event stream; comments, `event:` lines and blanks are skipped.

        Raises:
            StreamError: the event is an error object.
            MalformedStreamError: a `data:` line is not JSON.
        """
        if not line.startswith(_DATA):
            return
        payload = line[len(_DATA) :].strip()
        if payload == _DONE:
            self.done = True
            return
        try:
            chunk = json.loads(payload)
        except ValueError as exc:
            raise MalformedStreamError(line) from exc
        self.feed_chunk(chunk)

    def feed_chunk(self, chunk: object) -> None:
        """Take one decoded chunk."""
        if not isinstance(chunk, dict):
            return
        if "error" in chunk:
            raise StreamError(api_error_from_json(chunk) or ApiError("error in stream"))
        self.chunks += 1
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self.model = model
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            self._feed_choice(choices[0])

    def _feed_choice(self, choice: dict[str, object]) -> None:
        reason = choice.get("finish_reason")
        if isinstance(reason, str):
            self.finish_reason = reason
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        self.content += _str(delta.get("content"))
        self.reasoning += _str(delta.get("reasoning_content")) + _str(delta.get("reasoning"))
        self.refusal += _str(delta.get("refusal"))
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                if isinstance(call, dict):
                    self._feed_tool_call(call, position)

    def _feed_tool_call(self, call: dict[str, object], position: int) -> None:
        index = call.get("index")
        slot = self.tool_calls.setdefault(
            index if isinstance(index, int) else position, _ToolCall()
        )
        slot.id = slot.id or _str(call.get("id"))
        function = call.get("function")
        if isinstance(function, dict):
            slot.name = slot.name or _str(function.get("name"))
            slot.arguments += _str(function.get("arguments"))

    def body(self) -> dict[str, JsonValue]:
        """The non-streamed completion body these chunks add up to."""
        message: dict[str, JsonValue] = {"role": "assistant", "content": self.content or None}
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        if self.refusal:
            message["refusal"] = self.refusal
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for _, call in sorted(self.tool_calls.items())
            ]
        choice: dict[str, JsonValue] = {"index": 0, "message": message}
        choice["finish_reason"] = self.finish_reason
        return {"model": self.model, "choices": [choice], "usage": self.usage}


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""
