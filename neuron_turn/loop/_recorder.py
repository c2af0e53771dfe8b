"""`TimelineRecorder`: a turn's timeline, collected from the events a streamed turn emits.

When an input asks for its timeline (`layer0.request_timeline`), the loop
runs with this recorder as (part of) its event sink: the same events
`NeuronTurn.stream` yields, minus the deltas, each stamped with the time it
arrived. It keeps one small entry per model call, tool call and effect, so
recording costs a few appends per model call, and nothing at all for a turn
that was not asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from pydantic import JsonValue

from layer0 import (
    APPEND_HISTORY,
    CustomEffect,
    Effect,
    EffectEntry,
    HookHaltEntry,
    LimitEntry,
    ModelCallEntry,
    TimelineEntry,
    ToolCallEntry,
    TurnTimeline,
)

from .events import (
    EffectDeclared,
    HookHalted,
    LimitReached,
    ModelCallDone,
    ModelCallStart,
    ToolResult,
    ToolStart,
    TurnEvent,
)

__all__ = ["MAX_OUTPUT_CHARS", "TimelineRecorder", "both"]

MAX_OUTPUT_CHARS: Final = 16_000
"""A tool output longer than this is cut in the timeline (the history keeps it whole)."""


class TimelineRecorder:
    """A sink that turns a turn's events into timeline entries (see the module doc)."""

    def __init__(self, started: float) -> None:
        """Record times relative to `started` (a `time.monotonic()` reading)."""
        self._started = started
        self._entries: list[TimelineEntry] = []
        self._model_start = 0
        self._tool_starts: dict[str, tuple[int, JsonValue]] = {}

    def __call__(self, event: TurnEvent) -> None:
        """Take one event; deltas and `TurnDone` are ignored."""
        if isinstance(event, ModelCallStart):
            self._model_start = self._now()
        elif isinstance(event, ModelCallDone):
            self._entries.append(self._model_call(event))
        elif isinstance(event, ToolStart):
            self._tool_starts[event.id] = (self._now(), event.input)
        elif isinstance(event, ToolResult):
            self._entries.append(self._tool_call(event))
        elif isinstance(event, EffectDeclared) and not _is_history(event.effect):
            self._entries.append(EffectEntry(at=self._now(), effect=event.effect))
        elif isinstance(event, HookHalted):
            self._entries.append(HookHaltEntry(at=self._now(), reason=event.reason))
        elif isinstance(event, LimitReached):
            self._entries.append(LimitEntry(at=self._now(), reason=event.reason))

    def timeline(self, turn_id: str) -> TurnTimeline:
        """Return what was recorded so far, as the timeline of turn `turn_id`."""
        return TurnTimeline(turn_id=turn_id, entries=list(self._entries))

    def _now(self) -> int:
        return int((time.monotonic() - self._started) * 1000)

    def _model_call(self, event: ModelCallDone) -> ModelCallEntry:
        usage = event.usage
        return ModelCallEntry(
            call=event.call,
            model=event.model,
            start=self._model_start,
            duration=max(self._now() - self._model_start, 0),
            stop_reason=event.stop_reason,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_creation_tokens=usage.cache_creation_tokens,
            cost=event.cost,
        )

    def _tool_call(self, event: ToolResult) -> ToolCallEntry:
        start, tool_input = self._tool_starts.pop(
            event.id, (max(self._now() - event.duration, 0), None)
        )
        text = event.content
        cut = len(text) > MAX_OUTPUT_CHARS
        return ToolCallEntry(
            id=event.id,
            name=event.name,
            input=tool_input,
            output=text[:MAX_OUTPUT_CHARS] if cut else text,
            is_error=event.is_error,
            start=start,
            duration=event.duration,
            truncated=cut,
        )


def _is_history(effect: Effect) -> bool:
    """The history append holds the turn's messages, which its output already carries."""
    return isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY


def both(
    first: Callable[[TurnEvent], None], second: Callable[[TurnEvent], None]
) -> Callable[[TurnEvent], None]:
    """Return a sink that gives each event to `first`, then to `second`."""

    def sink(event: TurnEvent) -> None:
        first(event)
        second(event)

    return sink
