"""Decoding server-sent events (`text/event-stream`) line by line, as they arrive.

Shared by the HTTP provider plugins that stream: they read the body with
`httpx.Response.aiter_lines()` and feed each line here, so an event is
handed on as soon as its terminating blank line has arrived, and the same
decoder folds a body that was read whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeAlias

__all__ = ["SSEDecoder", "ServerSentEvent", "iter_sse"]

ServerSentEvent: TypeAlias = tuple[str, str]
"""One event: its `event` field (`"message"` when absent) and its data lines joined by `\\n`."""


class SSEDecoder:
    """Turns the lines of an event stream into events, following the WHATWG rules we need.

    Comment lines (`:` first) and unknown fields are skipped; `id` and
    `retry` carry nothing a model response needs.
    """

    __slots__ = ("_data", "_event")

    def __init__(self) -> None:
        """Start with no event pending."""
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> ServerSentEvent | None:
        """Take one line (without its line break); return the event a blank line completes."""
        if not line:
            return self.flush()
        if line[0] == ":":
            return None
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def flush(self) -> ServerSentEvent | None:
        """Return the pending event, if it has data (call at the end of the body too)."""
        event = (self._event or "message", "\n".join(self._data)) if self._data else None
        self._event, self._data = "", []
        return event


def iter_sse(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """Yield the events of a body already split into lines (e.g. `text.splitlines()`)."""
    decoder = SSEDecoder()
    for line in lines:
        event = decoder.feed(line)
        if event is not None:
            yield event
    last = decoder.flush()
    if last is not None:
        yield last
