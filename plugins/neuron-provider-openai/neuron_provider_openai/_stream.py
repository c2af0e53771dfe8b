"""Reading a streamed chat completion (server-sent events), chunk by chunk.

`StreamAccumulator` is the one parser of a stream: each line it is fed
returns the deltas it carries (what `OpenAIProvider.stream` yields), and it
folds the chunks into the shape of a non-streamed body, read by
`_wire.parse_completion`, so every path maps content the same way.

Tool calls are told apart by `index`: the `id` and name usually come with a
call's first chunk and never again. Some OpenAI-compatible servers send
every call whole in one chunk at index 0; a chunk naming a tool under
another id, at an index whose call already holds complete JSON arguments,
starts a new call there (a server resending the name with a fresh id on
each chunk of one call is still read as one: its arguments are not yet
whole). A call whose server sends no id gets one here, so its deltas and
its final `ToolUsePart` agree.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Final

from pydantic import JsonValue

from neuron_turn.loop.events import (
    ProviderDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)

from ._errors import ApiError, api_error_from_json
from ._wire import text_of, thinking_of

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


_NONE: Final[tuple[ProviderDelta, ...]] = ()


@dataclass(slots=True)
class _ToolCall:
    id: str = ""
    name: str = ""
    # Pieces, joined once (see StreamAccumulator's).
    arguments: list[str] = field(default_factory=list)
    started: bool = False


@dataclass(slots=True)
class StreamAccumulator:
    """Folds `chat.completion.chunk` events, line by line, into one completion body."""

    model: str = ""
    # Pieces, joined when read: `+=` on a string held in an object copies it whole
    # each time, so 100,000 small deltas took minutes (quadratic).
    content_pieces: list[str] = field(default_factory=list)
    reasoning_pieces: list[str] = field(default_factory=list)
    refusal_pieces: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: JsonValue = None
    tool_calls: dict[int, _ToolCall] = field(default_factory=dict)
    """The call being read at each index."""
    ended_calls: list[tuple[int, _ToolCall]] = field(default_factory=list)
    """Calls a later call at their index followed, with that index, in order."""
    done: bool = False
    chunks: int = 0

    @property
    def content(self) -> str:
        """The text so far."""
        return "".join(self.content_pieces)

    @property
    def reasoning(self) -> str:
        """The reasoning so far."""
        return "".join(self.reasoning_pieces)

    @property
    def refusal(self) -> str:
        """The refusal so far."""
        return "".join(self.refusal_pieces)

    @property
    def complete(self) -> bool:
        """Whether the stream reached its end (`[DONE]`, or a choice's `finish_reason`)."""
        return self.done or self.finish_reason is not None

    def feed_line(self, line: str) -> tuple[ProviderDelta, ...] | list[ProviderDelta]:
        """Take one line of the event stream; return the deltas it carries.

        Comments, `event:` lines and blanks are skipped.

        Raises:
            StreamError: the event is an error object.
            MalformedStreamError: a `data:` line is not JSON.
        """
        if not line.startswith(_DATA):
            return _NONE
        payload = line[len(_DATA) :].strip()
        if payload == _DONE:
            self.done = True
            return _NONE
        try:
            chunk = json.loads(payload)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            raise MalformedStreamError(line) from exc
        return self.feed_chunk(chunk)

    def feed_chunk(self, chunk: object) -> tuple[ProviderDelta, ...] | list[ProviderDelta]:
        """Take one decoded chunk; return the deltas it carries."""
        if not isinstance(chunk, dict):
            return _NONE
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
            return self._feed_choice(choices[0])
        return _NONE

    def _feed_choice(self, choice: dict[str, object]) -> list[ProviderDelta]:
        reason = choice.get("finish_reason")
        if isinstance(reason, str):
            self.finish_reason = reason
        out: list[ProviderDelta] = []
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return out
        content = delta.get("content")
        reasoning = _str(delta.get("reasoning_content")) + _str(delta.get("reasoning"))
        reasoning += thinking_of(content)  # Mistral's `thinking` chunks
        if reasoning:
            self.reasoning_pieces.append(reasoning)
            out.append(ThinkingDelta(reasoning))
        text = text_of(content)
        if text:
            self.content_pieces.append(text)
            out.append(TextDelta(text))
        refusal = _str(delta.get("refusal"))
        if refusal:
            self.refusal_pieces.append(refusal)
            out.append(TextDelta(refusal))
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                if isinstance(call, dict):
                    self._feed_tool_call(call, position, out)
        return out

    def _feed_tool_call(
        self, call: dict[str, object], position: int, out: list[ProviderDelta]
    ) -> None:
        index = call.get("index")
        key = index if isinstance(index, int) else position
        slot = self.tool_calls.setdefault(key, _ToolCall())
        function = call.get("function")
        if _starts_another(slot, call, function):
            self.ended_calls.append((key, slot))
            slot = self.tool_calls[key] = _ToolCall()
        slot.id = slot.id or _str(call.get("id"))
        fragment = ""
        if isinstance(function, dict):
            slot.name = slot.name or _str(function.get("name"))
            fragment = _str(function.get("arguments"))
            if fragment:
                slot.arguments.append(fragment)
        if slot.started:
            if fragment:
                out.append(ToolCallDelta(slot.id, fragment))
        elif slot.name:
            # Announced once its name is known; arguments sent before that go with it.
            slot.started = True
            slot.id = slot.id or f"call_{uuid.uuid4().hex[:24]}"
            out.append(ToolCallStart(slot.id, slot.name))
            if slot.arguments:
                out.append(ToolCallDelta(slot.id, "".join(slot.arguments)))

    def body(self) -> dict[str, JsonValue]:
        """The non-streamed completion body these chunks add up to."""
        message: dict[str, JsonValue] = {"role": "assistant", "content": self.content or None}
        if self.reasoning_pieces:
            message["reasoning_content"] = self.reasoning
        if self.refusal_pieces:
            message["refusal"] = self.refusal
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{uuid.uuid4().hex[:24]}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": "".join(call.arguments)},
                }
                for _, call in self._calls_in_order()
            ]
        choice: dict[str, JsonValue] = {"index": 0, "message": message}
        choice["finish_reason"] = self.finish_reason
        return {"model": self.model, "choices": [choice], "usage": self.usage}

    def _calls_in_order(self) -> list[tuple[int, _ToolCall]]:
        """Every call, by index; at one index, in the order they came."""
        calls = [*self.ended_calls, *self.tool_calls.items()]
        return sorted(calls, key=lambda item: item[0])  # stable: arrival order kept


def _starts_another(slot: _ToolCall, call: dict[str, object], function: object) -> bool:
    """Whether `call`, at the index of `slot`, is a new call rather than more of it."""
    new_id = _str(call.get("id"))
    if not (slot.name and new_id and slot.id and new_id != slot.id):
        return False
    if not (isinstance(function, dict) and _str(function.get("name"))):
        return False
    if not (slot.arguments and slot.arguments[-1].rstrip().endswith("}")):
        return False  # not whole (checked first: joining on every chunk is quadratic)
    try:
        json.loads("".join(slot.arguments))
    except (ValueError, RecursionError):
        return False  # its arguments are not whole yet: more of the same call
    return True


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""
