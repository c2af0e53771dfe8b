"""How much of one text captured content puts on a span: `MAX_CONTENT_CHARS`, then a note.

A tool can return megabytes (a file read whole) and a model can write them
into a tool call's arguments; with content capture on, every later model
call's `gen_ai.input.messages` repeats them. Uncut, one turn put tens of MB
on its spans: past what OTLP receivers take in one request (the Collector's
default is 20 MiB, gRPC's 4 MiB), so the whole batch, other turns' spans
with it, was refused. Each string is cut on its own, inside the JSON, so
what a span holds still parses.
"""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

__all__ = ["MAX_CONTENT_CHARS", "bounded", "bounded_json"]

MAX_CONTENT_CHARS: Final = 65_536
"""The most characters of one text (a message part, an argument, a result) a span holds."""


def bounded(text: str) -> str:
    """`text`, or its first `MAX_CONTENT_CHARS` characters and a note giving its length."""
    if len(text) <= MAX_CONTENT_CHARS:
        return text
    return f"{text[:MAX_CONTENT_CHARS]}… [{len(text):,} characters in all]"


def bounded_json(value: JsonValue) -> JsonValue:
    """`value` with each of its strings, keys too, `bounded`.

    Recursive: the loop refuses values nested deeper than it allows before any reach a span.
    """
    if isinstance(value, str):
        return bounded(value)
    if isinstance(value, list):
        return [bounded_json(item) for item in value]
    if isinstance(value, dict):
        return {bounded(key): bounded_json(item) for key, item in value.items()}
    return value
