"""The optional streaming half of the provider contract: `StreamingProvider`.

A provider may offer `stream(request)` beside `complete(request)`; the loop
finds it structurally (`streaming`) when a caller streams a turn, and
otherwise, or for a provider without it, calls `complete` and hands the
answer on whole (`deltas_of`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Protocol, TypeAlias, cast, runtime_checkable

from .events import ProviderDelta, TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from .provider import (
    Provider,
    ProviderRequest,
    ProviderResponse,
    TextPart,
    ThinkingPart,
    ToolUsePart,
)

__all__ = [
    "ProviderStreamEvent",
    "StreamingProvider",
    "call_deltas",
    "deltas_of",
    "streaming",
]


ProviderStreamEvent: TypeAlias = ProviderDelta | ProviderResponse
"""What a streaming provider yields: deltas, then exactly one `ProviderResponse`, last."""


@runtime_checkable
class StreamingProvider(Provider, Protocol):
    """A provider that can also stream: deltas as they arrive, then the whole response.

    Optional: the loop detects it structurally (`streaming`), and a provider
    without it still works, its answer then reaching a streaming caller as one
    delta. The final `ProviderResponse` must equal what `complete` would have
    returned for the same answer. Closing the iterator early (the caller
    cancelled) must close the underlying connection.
    """

    def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one model call, yielding `ProviderDelta`s and last the `ProviderResponse`.

        Raises the same `ProviderError` subclasses as `complete`, also mid-stream
        (a stream cut off before its end is a retryable connection error).
        """
        ...


def streaming(provider: Provider) -> StreamingProvider | None:
    """Return `provider` when it can stream (it has a callable `stream`), else None."""
    return (
        cast(StreamingProvider, provider) if callable(getattr(provider, "stream", None)) else None
    )


def deltas_of(
    response: ProviderResponse, *, chunk_size: int | None = None
) -> Iterator[ProviderDelta]:
    """Yield the deltas a stream of `response` would have carried, in content order.

    Why: a provider that cannot stream still reaches a streaming caller this
    way (whole parts, `chunk_size=None`), and test providers stream scripted
    responses in pieces of `chunk_size` characters. Tool arguments are the
    input's compact JSON.
    """
    for part in response.content:
        if isinstance(part, TextPart):
            yield from map(TextDelta, _pieces(part.text, chunk_size))
        elif isinstance(part, ThinkingPart):
            yield from map(ThinkingDelta, _pieces(part.thinking, chunk_size))
        elif isinstance(part, ToolUsePart):
            yield from call_deltas(part, chunk_size=chunk_size)


def call_deltas(part: ToolUsePart, *, chunk_size: int | None = None) -> Iterator[ProviderDelta]:
    """Yield a whole call's deltas: its `ToolCallStart`, then its input's compact JSON.

    Why: a call the API sends whole (an item only ever sent done, such as a
    remote MCP server's approval request) reaches a streaming caller as a
    streamed call does.
    """
    yield ToolCallStart(part.id, part.name)
    arguments = json.dumps(part.input, ensure_ascii=False, separators=(",", ":"))
    for piece in _pieces(arguments, chunk_size):
        yield ToolCallDelta(part.id, piece)


def _pieces(text: str, size: int | None) -> Iterator[str]:
    if size is None or size <= 0:
        if text:
            yield text
        return
    for start in range(0, len(text), size):
        yield text[start : start + size]
