"""Reporting a streaming turn's progress from its activity to its workflow.

When a dispatch asks for progress (`TemporalOrchestrator.stream`), the
`execute_turn` activity streams the turn and signals the workflow one JSON
event (`neuron_turn.event_json`) per model call and tool call as it happens:
the workflow keeps them for the `progress` query the caller polls. Text
deltas are not sent: each signal is an event in the workflow's history. For
the same reason a turn sends at most `MAX_TOOL_REPORTS` of its tools' own
progress reports (`RunContext.progress`); later ones are dropped, saying so
once in the log, so a tool reporting in a loop cannot fill the history.
Progress is best effort: a signal that fails is logged and the turn goes on.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from temporalio import activity

from layer0 import Turn, TurnInput, TurnOutput, WorkflowId
from neuron_turn import TurnDone, TurnEvent, close_cancelled, event_json

from .names import PROGRESS_SIGNAL

__all__ = ["MAX_TOOL_REPORTS", "PROGRESS_KINDS", "execute_reporting"]

PROGRESS_KINDS: Final = frozenset(
    {
        "model_call_start",
        "model_call_done",
        "tool_start",
        "tool_progress",
        "tool_result",
        "hook_halted",
        "limit_reached",
    }
)
"""The event kinds a workflow is told about (every kind but the deltas, effects and the end)."""
MAX_TOOL_REPORTS: Final = 256
"""The most tool progress reports one turn sends its workflow (each is a history event)."""

_log = logging.getLogger(__name__)
_STOP: Final = object()


async def execute_reporting(turn: Turn, input: TurnInput, workflow_id: WorkflowId) -> TurnOutput:
    """Run `turn` on `input`, signalling its progress events to `workflow_id`.

    A turn without a `stream` method is executed and reports nothing.
    """
    stream: Any = getattr(turn, "stream", None)
    if not callable(stream):
        return await turn.execute(input)
    sender = _Sender(workflow_id)
    output: TurnOutput | None = None
    events = stream(input)
    try:
        async for event in events:
            if isinstance(event, TurnDone):
                output = event.output
            elif event.kind in PROGRESS_KINDS:
                sender.send(event)
        await sender.drain()
    except asyncio.CancelledError as cancelled:
        await close_cancelled(events, cancelled)  # the turn stops, saying what it had done
        raise
    finally:
        sender.cancel()
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
    if output is None:
        raise RuntimeError("the turn's stream ended without its output")
    return output


class _Sender:
    """Signals events in order from one task, so the turn never waits on the server."""

    def __init__(self, workflow_id: WorkflowId) -> None:
        self._handle = activity.client().get_workflow_handle(workflow_id)
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._reports = 0
        self._task = asyncio.create_task(self._run())

    def send(self, event: TurnEvent) -> None:
        if event.kind == "tool_progress":
            self._reports += 1
            if self._reports > MAX_TOOL_REPORTS:
                if self._reports == MAX_TOOL_REPORTS + 1:
                    _log.warning(
                        "the tools of %s reported progress %d times; later reports are not sent",
                        self._handle.id,
                        MAX_TOOL_REPORTS,
                    )
                return
        self._queue.put_nowait(event_json(event))

    async def drain(self) -> None:
        self._queue.put_nowait(_STOP)
        await asyncio.shield(self._task)

    def cancel(self) -> None:
        self._task.cancel()

    async def _run(self) -> None:
        while (item := await self._queue.get()) is not _STOP:
            try:
                await self._handle.signal(PROGRESS_SIGNAL, item)
            except Exception as exc:  # progress is best effort; the turn is what matters
                _log.warning("progress of %s not reported: %s", self._handle.id, exc)
                return
