"""Streaming dispatch: the events of every turn a dispatch runs, as they happen.

`LocalOrchestrator.stream` runs `run` in a task and passes on each event of
each turn it executes (the dispatched agent's, its handoffs' and its
delegations'), tagged with the workflow and agent it belongs to. A turn
with a `stream` method (`NeuronTurn`) is streamed; any other `layer0.Turn`
is executed and reported by its `TurnDone` alone. A streamed turn cancelled
with the dispatch hands what it had done (its stream's `partial`) on with the
cancellation, for the orchestrator to keep.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from layer0 import AgentId, Turn, TurnInput, TurnOutput, WorkflowId, take_timeline

if TYPE_CHECKING:
    # Imported where used: this package stays importable without the loop (its
    # conventions are used inside Temporal's workflow sandbox).
    from neuron_turn import TurnDone, TurnEvent

__all__ = ["AgentEvent"]


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """One event of one agent's turn within a streamed dispatch."""

    workflow_id: WorkflowId
    agent: AgentId
    event: TurnEvent


EventSink = Callable[[AgentEvent], None]

SINK: Final[ContextVar[EventSink | None]] = ContextVar("neuron_orch_local_sink", default=None)
"""Where the turns of the current streamed dispatch report (None: nobody listens)."""


async def execute_streamed(
    turn: Turn, input: TurnInput, sink: EventSink, workflow_id: WorkflowId, agent: AgentId
) -> TurnOutput:
    """Run `turn` on `input`, passing each of its events to `sink`; return its output."""
    from neuron_turn import TurnDone

    stream: Any = getattr(turn, "stream", None)
    if not callable(stream):
        output = await turn.execute(input)
        sink(AgentEvent(workflow_id, agent, TurnDone(output)))
        return output
    events = stream(input)
    result: TurnOutput | None = None
    try:
        async for event in events:
            if isinstance(event, TurnDone):
                result = event.output
                event = _without_timeline(event)
            sink(AgentEvent(workflow_id, agent, event))
    except asyncio.CancelledError as cancelled:
        from neuron_turn import close_cancelled

        await close_cancelled(events, cancelled)  # the turn stops, saying what it had done
        raise
    finally:
        await _close(events)
    if result is None:
        raise RuntimeError(f"agent {agent!r}'s turn stream ended without its output")
    return result


async def _close(events: object) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()


def _without_timeline(done: TurnDone) -> TurnDone:
    """The turn's last event as listeners see it: its timeline is the orchestrator's record's.

    A malformed timeline is left for the orchestrator to refuse (`TurnRecording.returned`).
    """
    from neuron_turn import TurnDone

    try:
        output, timeline = take_timeline(done.output)
    except ValueError:
        return done
    return done if timeline is None else TurnDone(output)
