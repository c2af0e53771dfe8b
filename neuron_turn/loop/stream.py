"""`TurnStream`: what `NeuronTurn.stream` returns, the events of one turn as they happen.

The turn runs in a task of its own that hands events to a queue, and the
iterator reads the queue: the loop needs no knowledge of who listens (it
calls one function per event), and a slow consumer never stalls a tool or a
provider read. Closing the stream, or cancelling the task that iterates it,
cancels that task and waits for it, so nothing of the turn outlives its
consumer. `EventStream` is the same for any work that reports events
through a sink (an orchestrator's streaming dispatch uses it).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Final, Generic, Protocol, Self, TypeAlias, TypeVar, cast

from layer0 import AgentId, PartialTurn, TurnInput, TurnOutput, partial_of
from neuron_tool import RunUsage

from ._transcript import Transcript
from .events import TurnEvent
from .message_history import settled
from .provider import ProviderMessage
from .run_result import usage_of

__all__ = [
    "DispatchStream",
    "DispatchStreamer",
    "EventStream",
    "TurnStream",
    "close_cancelled",
    "dispatch_streamer",
]

E = TypeVar("E")
R = TypeVar("R")
Runner: TypeAlias = Callable[[Callable[[E], None]], Awaitable[R]]


class _End:
    """Queued after the last event: the turn's task has finished, one way or another."""


_END: Final = _End()


class _Run(Generic[E, R]):
    """The work's task and queue, shared by the stream and its iterator (no cycle between them)."""

    def __init__(self, runner: Runner[E, R]) -> None:
        self.runner = runner
        self.queue: asyncio.Queue[E | _End] = asyncio.Queue()
        self.task: asyncio.Task[R] | None = None
        self.result: R | None = None
        self.finished = False
        self.closed = False
        self.cancelled_with: asyncio.CancelledError | None = None
        """What the work raised when it was cancelled (it may say what it had done)."""

    def start(self) -> asyncio.Task[R]:
        if self.task is not None or self.closed:
            raise RuntimeError("a stream can be iterated once")
        self.task = asyncio.create_task(self._drive())
        return self.task

    async def _drive(self) -> R:
        try:
            return await self.runner(self.queue.put_nowait)
        except asyncio.CancelledError as exc:
            self.cancelled_with = exc
            raise
        finally:
            self.queue.put_nowait(_END)

    async def close(self) -> None:
        """Cancel the turn if it still runs and wait until it has stopped."""
        self.closed = True
        task = self.task
        if task is None:
            return
        if not task.done():
            task.cancel()
            await asyncio.wait([task])
        if not task.cancelled():
            task.exception()  # retrieved: an error after the consumer left is not news


async def _events(run: _Run[E, R]) -> AsyncGenerator[E, None]:
    task = run.start()
    try:
        while True:
            item = await run.queue.get()
            if isinstance(item, _End):
                break
            yield item
        if run.closed and task.cancelled():
            return  # closed from elsewhere while this iterator waited: just end
        run.result = await task
        run.finished = True
    finally:
        await run.close()


class EventStream(Generic[E, R]):
    """The events of some work as it reports them, then its result; iterate it once.

    Why: one implementation of "run it in a task, hand its events over a
    queue, cancel it when the consumer leaves", for turns and orchestrators.
    """

    def __init__(self, runner: Runner[E, R]) -> None:
        """Wrap `runner`, which does the work, sending each event to the sink it is given.

        The work starts when iteration starts.
        """
        self._run: _Run[E, R] = _Run(runner)
        self._iterator: weakref.ref[AsyncGenerator[E, None]] | None = None

    def __repr__(self) -> str:
        run = self._run
        state = "done" if run.finished else "running" if run.task else "new"
        return f"{type(self).__name__}({state})"

    def __aiter__(self) -> AsyncIterator[E]:
        # A fresh generator the `async for` alone holds: breaking out drops it,
        # and asyncio's finalizer closes it, which cancels the turn.
        iterator = _events(self._run)
        self._iterator = weakref.ref(iterator)
        return iterator

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the work if it still runs (cancelling e.g. a model call and tools) and wait."""
        iterator = None if self._iterator is None else self._iterator()
        if iterator is not None:
            try:
                await iterator.aclose()
            except RuntimeError:
                pass  # another task is iterating it; cancelling the turn below ends it
        await self._run.close()

    @property
    def result(self) -> R:
        """What the work returned, once the stream has been read to its end.

        Raises:
            RuntimeError: the stream was not read to its end.
        """
        if not self._run.finished:
            raise RuntimeError("the work has not finished: read the stream to its end first")
        return cast(R, self._run.result)

    @property
    def partial(self) -> PartialTurn | None:
        """What the work had done when it was cancelled (closed, or its reader cancelled).

        None unless it says (`layer0.partial_of`): a turn whose tools had run, or
        a dispatch whose turn's had. An orchestrator keeps it, so the session
        says which tools ran.
        """
        cancelled = self._run.cancelled_with
        return None if cancelled is None else partial_of(cancelled)

    @property
    def stop_notes(self) -> tuple[str, ...]:
        """What the work noted as it was cancelled (what its stop left undone, if anything).

        E.g. a part that could not be kept, or a remote stop not seen through.
        """
        cancelled = self._run.cancelled_with
        return () if cancelled is None else tuple(getattr(cancelled, "__notes__", ()))


class TurnStream(EventStream[TurnEvent, TurnOutput]):
    """The events of one turn, in order, ending with `TurnDone`; iterate it once.

    Example::

        async with turn.stream(input) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    print(event.text, end="", flush=True)
        output = events.output
    """

    def __init__(
        self, runner: Runner[TurnEvent, TurnOutput], transcript: Transcript | None = None
    ) -> None:
        """Wrap `runner`; `transcript` is where the turn leaves its messages (`all_messages`)."""
        super().__init__(runner)
        self._transcript = transcript

    @property
    def output(self) -> TurnOutput:
        """The turn's output, once the stream has been read to its end.

        Raises:
            RuntimeError: the stream was not read to its end.
        """
        if not self._run.finished:
            raise RuntimeError("the turn has not finished: read the stream to its end first")
        return self.result

    @property
    def usage(self) -> RunUsage:
        """What the turn used: as its output says, or what it had used when it failed.

        A turn that failed or was cancelled never gives its output; this says what
        it spent all the same, so a caller paying for it (an agent tool) is charged.

        Raises:
            RuntimeError: the turn is still running, or failed before its first step.
        """
        transcript = self._transcript
        failed = None if transcript is None else transcript.failed_usage
        return usage_of(self.output) if failed is None else failed

    def all_messages(self) -> list[ProviderMessage]:
        """The conversation after the turn (as `RunResult.all_messages`), once read to its end.

        Raises:
            RuntimeError: the stream was not read to its end, or was made without a
                transcript (not by `NeuronTurn.stream`).
        """
        transcript = self._finished_transcript()
        return settled([*transcript.history, *transcript.new])

    def new_messages(self) -> list[ProviderMessage]:
        """The messages the turn added (as `RunResult.new_messages`), once read to its end.

        Raises:
            RuntimeError: as `all_messages`.
        """
        return settled(self._finished_transcript().new)

    def _finished_transcript(self) -> Transcript:
        self.output  # noqa: B018 - raises until the turn has finished
        if self._transcript is None:
            raise RuntimeError(
                "this stream keeps no messages: NeuronTurn.stream makes one that does"
            )
        return self._transcript


async def close_cancelled(events: object, cancelled: asyncio.CancelledError) -> None:
    """Close `events`, whose reader is being cancelled, handing on what their work had done.

    The work (a turn, a dispatch) stops; what it had done (the stream's
    `partial`: its tools ran) goes on `cancelled`, where `layer0.partial_of`
    finds it once the cancellation leaves the reader's task, so whoever
    cancelled can keep it or go on from it, and so do the notes its stop
    left (`stop_notes`). `events` is any stream with `aclose` (and, if it
    says, `partial` and `stop_notes`).
    """
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()
    partial = getattr(events, "partial", None)
    if isinstance(partial, PartialTurn) and partial_of(cancelled) is None:
        cancelled.partial = partial  # type: ignore[attr-defined]
    noted = getattr(cancelled, "__notes__", ())
    for note in getattr(events, "stop_notes", ()):
        if note not in noted:
            cancelled.add_note(note)


class StreamedEvent(Protocol):
    """One event of a streamed dispatch: the workflow it comes from, and the turn's event.

    `neuron_orch_local.AgentEvent` has this shape.
    """

    @property
    def workflow_id(self) -> str:
        """The workflow (the dispatch, or a delegation in it) the event comes from."""
        ...

    @property
    def event(self) -> object:
        """The turn's event (a `TurnEvent`)."""
        ...


class StreamedResult(Protocol):
    """What a streamed dispatch ends with: its output (`neuron_orch_local.DispatchResult`)."""

    @property
    def output(self) -> TurnOutput:
        """The dispatch's output."""
        ...


class DispatchStream(Protocol):
    """What a streaming orchestrator's `stream(agent, input)` returns (an `EventStream`).

    Its events are `StreamedEvent`s; its `result` is the dispatch's, read once
    the stream is done. Why: a server for other clients (A2A, AG-UI) streams any orchestrator that
    can, without depending on one (`LocalOrchestrator` and `TemporalOrchestrator`
    have `stream`).
    """

    def __aiter__(self) -> AsyncIterator[StreamedEvent]:
        """The dispatch's events as they come."""
        ...

    async def __aenter__(self) -> DispatchStream:
        """Start the dispatch."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop the dispatch if it still runs."""
        ...

    @property
    def result(self) -> StreamedResult:
        """The dispatch's result, once the stream was read to its end."""
        ...


DispatchStreamer: TypeAlias = Callable[[AgentId, TurnInput], DispatchStream]
"""A streaming orchestrator's `stream` method."""


def dispatch_streamer(orchestrator: object) -> DispatchStreamer | None:
    """The `stream(agent, input)` of `orchestrator` if it streams its dispatches, else None."""
    streaming = getattr(orchestrator, "stream", None)
    return cast(DispatchStreamer, streaming) if callable(streaming) else None
