"""Folding a streamed (`text/event-stream`) Messages response into the message JSON.

The provider is not streaming towards its caller: with `stream=True` it asks
the API for server-sent events only to keep long generations alive, then
rebuilds the same `type: "message"` object a non-streaming call returns, so
one response mapping (`_wire.parse_message`) serves both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Final, cast

from pydantic import JsonValue

from ._wire import JsonObject, WireError, as_object

_APPENDED: Final = {"text_delta": "text", "thinking_delta": "thinking"}


class StreamedError(Exception):
    """The stream carried an `error` event (e.g. `overloaded_error` after the 200)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


def iter_events(text: str) -> Iterator[tuple[str, str]]:
    """Yield `(event, data)` for each server-sent event in `text`."""
    event = ""
    data: list[str] = []
    for line in text.splitlines():
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
    if data:
        yield event or "message", "\n".join(data)


def fold_event_stream(text: str) -> JsonObject:
    """Return the message JSON that the event stream `text` describes.

    Raises:
        StreamedError: the stream reported an error.
        WireError: the stream is malformed or ends before `message_stop`.
    """
    folder = _Folder()
    for _event, data in iter_events(text):
        try:
            payload = json.loads(data)
        except ValueError as exc:
            raise WireError(f"an event's data is not JSON: {exc}") from exc
        if not isinstance(payload, dict):
            raise WireError("an event's data is not a JSON object")
        folder.feed(cast(JsonObject, payload))
    return folder.result()


class _Folder:
    """Applies events in order, as the API's streaming reference describes them."""

    def __init__(self) -> None:
        self.message: JsonObject | None = None
        self.blocks: dict[int, JsonObject] = {}
        self.partial_json: dict[int, str] = {}
        self.stopped = False

    def feed(self, event: JsonObject) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.message = dict(as_object(event.get("message"), "message_start.message"))
        elif kind == "content_block_start":
            self.blocks[_index(event)] = dict(
                as_object(event.get("content_block"), "content_block")
            )
        elif kind == "content_block_delta":
            self._delta(_index(event), as_object(event.get("delta"), "delta"))
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

    def _delta(self, index: int, delta: JsonObject) -> None:
        block = self._block(index)
        kind = delta.get("type")
        if kind in _APPENDED:
            key = _APPENDED[str(kind)]
            block[key] = str(block.get(key, "")) + str(delta.get(key, ""))
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature")
        elif kind == "input_json_delta":
            self.partial_json[index] = self.partial_json.get(index, "") + str(
                delta.get("partial_json", "")
            )
        elif kind == "citations_delta":
            citations = block.setdefault("citations", [])
            if isinstance(citations, list):
                citations.append(delta.get("citation"))

    def _close_block(self, index: int) -> None:
        block = self._block(index)
        partial = self.partial_json.pop(index, None)
        if partial is None:
            return
        try:
            block["input"] = json.loads(partial) if partial.strip() else {}
        except ValueError as exc:
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
        message = self._message()
        if not self.stopped:
            raise WireError("the stream ended before message_stop")
        content: list[JsonValue] = [self.blocks[index] for index in sorted(self.blocks)]
        message["content"] = content
        return message


def _index(event: JsonObject) -> int:
    index = event.get("index")
    if not isinstance(index, int):
        raise WireError(f"{event.get('type')} has no integer 'index'")
    return index
