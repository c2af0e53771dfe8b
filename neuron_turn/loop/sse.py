"""Decoding server-sent events (`text/event-stream`) line by line, as they arrive.

Shared by the HTTP provider plugins that stream: they read the body's lines
with `body_lines(response.aiter_bytes())` and feed each here, so an event is
handed on as soon as its terminating blank line has arrived, and the same
decoder folds a body that was read whole.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Final, TypeAlias

__all__ = ["SSEDecoder", "ServerSentEvent", "body_lines", "iter_sse", "text_lines"]

_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")

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
    """Yield the events of a body already split into lines (`text_lines(text)`)."""
    decoder = SSEDecoder()
    for line in lines:
        event = decoder.feed(line)
        if event is not None:
            yield event
    last = decoder.flush()
    if last is not None:
        yield last


def text_lines(text: str) -> list[str]:
    """Split a body read whole into lines at CR LF, CR and LF only (not as `str.splitlines`).

    Why: `splitlines` also splits at U+2028, U+2029, U+0085 and other
    separators JSON carries unescaped inside a string (see `body_lines`).
    """
    return _LINE_BREAK.split(text)


async def body_lines(chunks: AsyncIterable[bytes]) -> AsyncIterator[str]:
    """Yield the lines of a UTF-8 body arriving in `chunks`, split only at CR LF, CR and LF.

    Why not `httpx.Response.aiter_lines()`: it splits as `str.splitlines` does,
    also at U+2028, U+2029, U+0085 and other separators JSON carries unescaped
    inside a string, so a model writing one of them broke its event's (or its
    NDJSON line's) JSON in two and failed the call. Event streams and NDJSON
    break lines at CR LF, CR and LF only. Undecodable bytes become U+FFFD; a
    line is handed on as soon as its break arrives.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending: list[str] = []
    # A chunk ending in CR may be followed by the LF of the same CR LF.
    skip_lf = False
    async for chunk in chunks:
        text = decoder.decode(chunk)
        if skip_lf and text:
            text = text.removeprefix("\n")
            skip_lf = False
        parts = _LINE_BREAK.split(text)
        if len(parts) > 1:
            yield "".join(pending) + parts[0]
            pending.clear()
            for line in parts[1:-1]:
                yield line
            skip_lf = text.endswith("\r")
        if parts[-1]:
            pending.append(parts[-1])
    pending.append(decoder.decode(b"", final=True))
    last = "".join(pending)
    if last:
        yield last
