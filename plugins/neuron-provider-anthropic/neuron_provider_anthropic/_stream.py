"""Reading a streamed (`text/event-stream`) Messages response, event by event.

`MessageStream` applies the API's events in order: it hands each text,
thinking and tool-argument fragment on as a delta (what `AnthropicProvider.stream`
yields) while rebuilding the same `type: "message"` object a non-streaming
call returns, so one response mapping (`_wire.parse_message`) serves every
path, and `fold_event_stream` (a body read whole) is the same parser with
its deltas dropped.
"""

from __future__ import annotations

import json
from typing import cast

from pydantic import JsonValue

from neuron_turn.loop.events import (
    ProviderDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)
from neuron_turn.loop.sse import iter_sse, text_lines

from ._wire import JsonObject, WireError, as_object


class StreamedError(Exception):
    """The stream carried an `error` event (e.g. `overloaded_error` after the 200)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class StreamCutError(WireError):
    """The stream ended before `message_stop`: the connection was cut, the answer is partial."""


def event_json(data: str) -> JsonObject:
    """Decode one event's data.

    Raises:
        WireError: it is not a JSON object.
    """
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise WireError(f"an event's data is not JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise WireError("an event's data is not a JSON object")
    return cast(JsonObject, payload)


def fold_event_stream(text: str) -> JsonObject:
    """Return the message JSON that the event stream `text` describes.

    Raises:
        StreamedError: the stream reported an error.
        WireError: the stream is malformed or ends before `message_stop`.
    """
    stream = MessageStream()
    for _event, data in iter_sse(text_lines(text)):
        stream.feed(event_json(data))
    return stream.result()


class MessageStream:
    """Applies events in order, as the API's streaming reference describes them.

    `feed` returns the delta an event carries (None for the others); `result`
    returns the whole message once `message_stop` has arrived.
    """

    __slots__ = ("blocks", "events", "message", "partial_json", "pieces", "stopped")

    def __init__(self) -> None:
        """Start before `message_start`."""
        self.message: JsonObject | None = None
        self.blocks: dict[int, JsonObject] = {}
        # Text, thinking and tool input arrive in pieces, kept as lists and joined once:
        # `+=` on a string held in a dict copies it whole each time, so 100,000 small
        # deltas took minutes (quadratic).
        self.pieces: dict[tuple[int, str], list[str]] = {}
        self.partial_json: dict[int, list[str]] = {}
        self.stopped = False
        self.events = 0

    def feed(self, event: JsonObject) -> ProviderDelta | None:
        """Apply one event; return the delta it carries, if any.

        Raises:
            StreamedError: the event is an `error` event.
            WireError: the event does not fit the stream so far.
        """
        self.events += 1
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(_index(event), as_object(event.get("delta"), "delta"))
        if kind == "content_block_start":
            return self._start_block(_index(event), event)
        if kind == "message_start":
            self.message = dict(as_object(event.get("message"), "message_start.message"))
        elif kind == "content_block_stop":
            self._close_block(_index(event))
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            error = as_object(event.get("error"), "error")
            raise StreamedError(str(error.get("type", "error")), str(error.get("message", "")))
        # ping and event types added later carry nothing the message needs.
        return None

    def _start_block(self, index: int, event: JsonObject) -> ProviderDelta | None:
        block = self.blocks[index] = dict(as_object(event.get("content_block"), "content_block"))
        # A block started again starts over (its pieces so far were the old block's).
        self.pieces.pop((index, "text"), None)
        self.pieces.pop((index, "thinking"), None)
        self.partial_json.pop(index, None)
        kind = block.get("type")
        if kind == "tool_use":
            return ToolCallStart(str(block.get("id", "")), str(block.get("name", "")))
        text = block.get(str(kind))  # a text or thinking block may start with some text
        if kind == "text" and isinstance(text, str) and text:
            return TextDelta(text)
        if kind == "thinking" and isinstance(text, str) and text:
            return ThinkingDelta(text)
        return None

    def _delta(self, index: int, delta: JsonObject) -> ProviderDelta | None:
        block = self._block(index)
        kind = delta.get("type")
        if kind == "text_delta":
            text = str(delta.get("text", ""))
            self._add(index, block, "text", text)
            return TextDelta(text) if text else None
        if kind == "thinking_delta":
            text = str(delta.get("thinking", ""))
            self._add(index, block, "thinking", text)
            return ThinkingDelta(text) if text else None
        if kind == "input_json_delta":
            partial = str(delta.get("partial_json", ""))
            self.partial_json.setdefault(index, []).append(partial)
            # A server tool's input (web search's query, an MCP tool's arguments) is the
            # API's own call, not one the loop runs: only a `tool_use` block's input is
            # a call's delta.
            if not partial or block.get("type") != "tool_use":
                return None
            return ToolCallDelta(str(block.get("id", "")), partial)
        if kind == "signature_delta":
            block["signature"] = delta.get("signature")
        elif kind == "citations_delta":
            citations = block.setdefault("citations", [])
            if isinstance(citations, list):
                citations.append(delta.get("citation"))
        return None

    def _add(self, index: int, block: JsonObject, field: str, text: str) -> None:
        """Add `text` to `block`'s `field`, which is joined when the block is read."""
        pieces = self.pieces.get((index, field))
        if pieces is None:
            pieces = self.pieces[index, field] = [str(block.get(field, ""))]
        pieces.append(text)

    def _close_block(self, index: int) -> None:
        block = self._block(index)
        pieces = self.partial_json.pop(index, None)
        if pieces is None:
            return
        partial = "".join(pieces)
        try:
            block["input"] = json.loads(partial) if partial.strip() else {}
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past the parser
            raise WireError(f"tool input of block {index} is not JSON: {exc}") from exc

    def _message_delta(self, event: JsonObject) -> None:
        message = self._message()
        message.update(as_object(event.get("delta", {}), "message_delta.delta"))
        usage = event.get("usage")
        if isinstance(usage, dict):
            # The delta's counts are cumulative; null means "unchanged".
            merged = dict(as_object(message.get("usage", {}), "usage"))
            merged.update((key, value) for key, value in usage.items() if value is not None)
            message["usage"] = merged

    def _block(self, index: int) -> JsonObject:
        if index not in self.blocks:
            raise WireError(f"a delta for content block {index}, which was never started")
        return self.blocks[index]

    def _message(self) -> JsonObject:
        if self.message is None:
            raise WireError("the stream did not start with message_start")
        return self.message

    def result(self) -> JsonObject:
        """Return the message the events describe.

        Raises:
            StreamCutError: `message_stop` has not arrived.
        """
        if not self.stopped:
            raise StreamCutError(
                f"the stream ended before message_stop, after {self.events} event(s)"
            )
        message = self._message()
        for (index, field), pieces in self.pieces.items():
            self.blocks[index][field] = "".join(pieces)
        self.pieces.clear()
        content: list[JsonValue] = [self.blocks[index] for index in sorted(self.blocks)]
        message["content"] = content
        return message


def _index(event: JsonObject) -> int:
    index = event.get("index")
    if not isinstance(index, int):
        raise WireError(f"{event.get('type')} has no integer 'index'")
    return index
