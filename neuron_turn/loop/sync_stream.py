"""`SyncTurnStream`: a turn's events read with a plain `for`, from code with no event loop.

`turn.stream_sync(prompt)` is `turn.stream(prompt)` for a script or a REPL, as
pydantic-ai's `run_stream_sync`: each event is waited for on the thread's own
event loop (the one `run_sync` keeps), so a provider's pooled connections
outlive the stream. Leaving the loop early (`break`, an exception, `close()`,
the `with` block's end) cancels the turn as `aclose()` does.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Generator, Iterator
from types import TracebackType
from typing import Self

from layer0 import TurnOutput
from neuron_tool import RunUsage

from ._blocking import run_blocking
from .events import TurnEvent
from .provider import ProviderMessage
from .stream import TurnStream

__all__ = ["SyncTurnStream"]


class SyncTurnStream:
    """The events of one turn, in order, ending with `TurnDone`; iterate it once with `for`.

    Example::

        with turn.stream_sync("Hi") as events:
            for event in events:
                if isinstance(event, TextDelta):
                    print(event.text, end="", flush=True)
        output = events.output
    """

    def __init__(self, stream: TurnStream) -> None:
        """Read `stream` (not started yet) one event at a time on this thread's loop."""
        self._stream = stream
        self._started = False
        self._events: weakref.ref[Generator[TurnEvent]] | None = None

    def __repr__(self) -> str:
        return f"SyncTurnStream({self._stream!r})"

    def __iter__(self) -> Iterator[TurnEvent]:
        if self._started:
            raise RuntimeError("a turn's stream is read once: this one was read before")
        self._started = True
        events = _read(self._stream)
        # Held weakly, as `EventStream` holds its iterator: the `for` alone holds the
        # reader, so `break` drops it and its `finally` cancels the turn even while this
        # stream is kept in a name (the turn would otherwise run on in the next run_sync).
        self._events = weakref.ref(events)
        return events

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the turn if it still runs (its model call and tools cancelled) and wait."""
        events = None if self._events is None else self._events()
        if events is not None:
            events.close()  # its own `finally` stops the turn
        run_blocking(self._stream.aclose())

    @property
    def output(self) -> TurnOutput:
        """The turn's output, once the stream has been read to its end (as `TurnStream`'s)."""
        return self._stream.output

    @property
    def usage(self) -> RunUsage:
        """What the turn used, failed or not (as `TurnStream.usage`)."""
        return self._stream.usage

    def all_messages(self) -> list[ProviderMessage]:
        """The conversation after the turn, once read to its end (as `TurnStream`'s)."""
        return self._stream.all_messages()

    def new_messages(self) -> list[ProviderMessage]:
        """The messages the turn added, once read to its end (as `TurnStream`'s)."""
        return self._stream.new_messages()


def _read(stream: TurnStream) -> Generator[TurnEvent]:
    events = aiter(stream)
    try:
        while True:
            try:
                yield run_blocking(_next(events))
            except StopAsyncIteration:
                return
    finally:
        # Also on `break` or an error in the reader's loop body: the turn is cancelled.
        run_blocking(stream.aclose())


async def _next(events: AsyncIterator[TurnEvent]) -> TurnEvent:
    return await anext(events)
