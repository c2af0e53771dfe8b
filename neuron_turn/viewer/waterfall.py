"""The waterfall of a turn: one row per model or tool call, placed on the turn's time axis.

Each call becomes a bar whose left edge is when it started and whose width is
how long it took, both as percentages of the turn's span, so the page draws
it with CSS alone. Effects, hook halts and limits become markers at the
moment they happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from pydantic import JsonValue

from layer0 import (
    CustomEffect,
    EffectEntry,
    HookHaltEntry,
    LimitEntry,
    LogEffect,
    ModelCallEntry,
    TimelineEntry,
    ToolCallEntry,
    TurnRecord,
)

__all__ = ["Bar", "Marker", "Waterfall", "waterfall"]

_MIN_WIDTH: Final = 0.4
"""The narrowest bar, in percent, so a call of 0 ms still shows."""

BarKind = Literal["model", "tool", "tool-error"]
MarkerKind = Literal["effect", "hook_halt", "limit"]


@dataclass(frozen=True, slots=True)
class Bar:
    """One model or tool call on the waterfall."""

    kind: BarKind
    label: str
    start: int
    """Milliseconds since the turn began."""
    duration: int
    left: float
    """Percent of the span."""
    width: float
    """Percent of the span."""
    tokens: str = ""
    """Model calls: `in / out` tokens."""
    cost: str = ""
    """Model calls: USD, or `unknown`."""
    detail: str = ""
    """Model calls: the stop reason; tool calls: `failed` or `ok`."""
    input: JsonValue = None
    """Tool calls: the input."""
    output: str = ""
    """Tool calls: the output or error text."""
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class Marker:
    """Something that happened at one moment: an effect declared, a halt, a limit."""

    kind: MarkerKind
    label: str
    at: int
    left: float


@dataclass(frozen=True, slots=True)
class Waterfall:
    """The bars and markers of one turn over its span (milliseconds)."""

    span: int
    bars: tuple[Bar, ...]
    markers: tuple[Marker, ...]


def waterfall(record: TurnRecord) -> Waterfall:
    """Lay out `record`'s timeline (see the module doc)."""
    span = max(_span(record.timeline), 1)
    if record.output is not None:
        span = max(span, record.output.metadata.duration)
    bars = tuple(_bar(e, span) for e in record.timeline if isinstance(e, _CALLS))
    markers = tuple(_marker(e, span) for e in record.timeline if not isinstance(e, _CALLS))
    return Waterfall(span, bars, markers)


_CALLS: Final = (ModelCallEntry, ToolCallEntry)


def _span(entries: list[TimelineEntry]) -> int:
    ends = [
        e.start + e.duration if isinstance(e, ModelCallEntry | ToolCallEntry) else e.at
        for e in entries
    ]
    return max(ends, default=0)


def _percent(ms: int, span: int) -> float:
    return round(min(ms / span * 100, 100.0), 2)


def _bar(entry: ModelCallEntry | ToolCallEntry, span: int) -> Bar:
    left = _percent(entry.start, span)
    width = max(_percent(entry.duration, span), _MIN_WIDTH)
    width = min(width, max(100.0 - left, _MIN_WIDTH))
    if isinstance(entry, ModelCallEntry):
        return Bar(
            kind="model",
            label=f"model call {entry.call} · {entry.model}",
            start=entry.start,
            duration=entry.duration,
            left=left,
            width=width,
            tokens=f"{entry.input_tokens} in / {entry.output_tokens} out",
            cost="unknown" if entry.cost is None else f"${entry.cost.amount:.4f}",
            detail=entry.stop_reason,
        )
    return Bar(
        kind="tool-error" if entry.is_error else "tool",
        label=f"tool · {entry.name}",
        start=entry.start,
        duration=entry.duration,
        left=left,
        width=width,
        detail="failed" if entry.is_error else "ok",
        input=entry.input,
        output=entry.output,
        truncated=entry.truncated,
    )


def _marker(entry: EffectEntry | HookHaltEntry | LimitEntry, span: int) -> Marker:
    left = _percent(entry.at, span)
    if isinstance(entry, EffectEntry):
        effect = entry.effect
        if isinstance(effect, LogEffect):
            # Lifecycle events (context pressure, compaction, cost) come as log effects.
            return Marker("effect", f"log · {effect.message}", entry.at, left)
        name = effect.effect_type if isinstance(effect, CustomEffect) else effect.type
        return Marker("effect", f"effect · {name}", entry.at, left)
    if isinstance(entry, HookHaltEntry):
        return Marker("hook_halt", f"halted by a hook: {entry.reason}", entry.at, left)
    reason = entry.reason if isinstance(entry.reason, str) else entry.reason.model_dump_json()
    return Marker("limit", f"limit reached: {reason}", entry.at, left)
