"""`SyncTurnStream`: a turn's events read with a plain `for`, from code with no event loop.

`turn.stream_sync(prompt)` is `turn.stream(prompt)` for a script or a REPL, as
pydantic-ai's `run_stream_sync`: each event is waited for on the thread's own
event loop (the one `run_sync` keeps), so a provider's pooled connections
outlive the stream. Leaving the loop early (`break`, an exception, `close()`,
the `with` block's end) cancels the turn as `aclose()` does. The turn runs on
the loop of the thread that began reading, so that thread alone reads on and
closes it (another is refused with `RunSyncError`, where its own loop would
wait for ever).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Generator, Iterator
from types import TracebackType
from typing import Self

from layer0 import TurnOutput
from neuron_tool import RunUsage

from ._blocking import blocking_loop, run_blocking
from .events import TurnEvent
from .provider import ProviderMessage
from .run_result import RunSyncError
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
        self._reader: weakref.ref[_Reader] | None = None
        self._thread: int | None = None
        """The thread that began reading: its loop runs the turn."""

    def __repr__(self) -> str:
        return f"SyncTurnStream({self._stream!r})"

    def __iter__(self) -> Iterator[TurnEvent]:
        if self._thread is not None:
            raise RuntimeError("a turn's stream is read once: this one was read before")
        self._thread = threading.get_ident()
        reader = _Reader(self._stream, self._thread)
        # Held weakly, as `EventStream` holds its iterator: the `for` alone holds the
        # reader, so `break` drops it and its `finally` cancels the turn even while this
        # stream is kept in a name (the turn would otherwise run on in the next run_sync).
        self._reader = weakref.ref(reader)
        return reader

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
        _check_caller(self._thread)
        if self._thread is None:
            run_blocking(self._stream.aclose())  # nothing started: marks it closed
            return
        reader = None if self._reader is None else self._reader()
        if reader is not None:
            reader.close()  # its own `finally` stops the turn
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


class _Reader(Iterator[TurnEvent]):
    """One read of a stream, on the thread that began it (whose loop runs the turn)."""

    def __init__(self, stream: TurnStream, thread: int) -> None:
        self._thread = thread
        self._events = _read(stream, thread)

    def __next__(self) -> TurnEvent:
        _check_caller(self._thread)
        return next(self._events)

    def close(self) -> None:
        self._events.close()


def _read(stream: TurnStream, thread: int) -> Generator[TurnEvent]:
    loop = blocking_loop()
    events = aiter(stream)
    # Held here while read: a reader in a reference cycle is garbage with its turn's task,
    # which the collector would destroy pending, its tools closed mid-await, not cancelled.
    _reading.add(stream)
    try:
        while True:
            try:
                yield run_blocking(_next(events))
            except StopAsyncIteration:
                return
    finally:
        try:
            # Also on `break` or an error in the reader's loop body: the turn is cancelled.
            if threading.get_ident() == thread and not _in_loop():
                run_blocking(stream.aclose())
            else:
                # Freed where nothing can wait for the turn to stop: by the collector inside
                # a running loop, or last on another thread. Closed on the turn's own loop
                # (now, or when it next runs), never left to run on or destroyed pending.
                loop.call_soon_threadsafe(_close_soon, stream)
        finally:
            _reading.discard(stream)


def _in_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _close_soon(stream: TurnStream) -> None:
    closing = asyncio.ensure_future(stream.aclose())
    _closing.add(closing)  # held until done: a loop holds its tasks only weakly
    closing.add_done_callback(_closing.discard)


_closing: set[asyncio.Future[None]] = set()
_reading: set[TurnStream] = set()


def _check_caller(thread: int | None) -> None:
    """Refuse a caller that cannot wait here for the turn's events.

    Raises:
        RunSyncError: an event loop runs here (async code, which cannot block on one
            of its own), or this is another thread than `thread` (its own loop would
            wait for ever on events `thread`'s makes).
    """
    if _in_loop():
        raise RunSyncError(
            "a stream_sync stream was read or closed where an event loop runs; "
            "iterate turn.stream(...) with async for instead"
        )
    if thread is not None and threading.get_ident() != thread:
        raise RunSyncError(
            "a stream_sync stream is read and closed on the thread that began reading it, "
            "whose event loop runs its turn"
        )


async def _next(events: AsyncIterator[TurnEvent]) -> TurnEvent:
    return await anext(events)
