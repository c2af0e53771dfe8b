"""The waterfall's layout: bars on the turn's time axis, markers where things happened."""

from __future__ import annotations

from layer0 import (
    EffectEntry,
    LimitEntry,
    LogEffect,
    LogLevel,
    ModelCallEntry,
    ToolCallEntry,
    TurnInput,
    TurnRecord,
    usd,
)
from neuron_turn.viewer import waterfall


def record(*entries: ModelCallEntry | ToolCallEntry | EffectEntry | LimitEntry) -> TurnRecord:
    return TurnRecord(
        turn_id="t",
        agent="a",
        workflow_id="w",
        started="2026-01-01T00:00:00.000+00:00",
        input=TurnInput(message="hi", trigger="user"),
        timeline=list(entries),
        status="executed",
    )


def model(call: int, start: int, duration: int) -> ModelCallEntry:
    return ModelCallEntry(
        call=call,
        model="m",
        start=start,
        duration=duration,
        stop_reason="end_turn",
        input_tokens=5,
        output_tokens=2,
        cost=usd("0.01"),
    )


def test_bars_sit_where_calls_started_and_are_as_wide_as_they_took() -> None:
    tool = ToolCallEntry(
        id="c", name="add", input={}, output="2", is_error=True, start=500, duration=100
    )
    fall = waterfall(record(model(1, 0, 500), tool, model(2, 600, 400)))
    assert fall.span == 1000
    assert [(b.kind, b.left, b.width) for b in fall.bars] == [
        ("model", 0.0, 50.0),
        ("tool-error", 50.0, 10.0),
        ("model", 60.0, 40.0),
    ]
    assert (fall.bars[0].tokens, fall.bars[0].cost) == ("5 in / 2 out", "$0.0100")


def test_an_instant_call_still_shows_and_no_bar_passes_the_end() -> None:
    fall = waterfall(record(model(1, 0, 1000), model(2, 1000, 0)))
    last = fall.bars[1]
    assert last.left == 100.0 and 0 < last.width <= 0.4


def test_effects_and_limits_are_markers_and_a_log_shows_its_message() -> None:
    log = LogEffect(level=LogLevel.INFO, message="context pressure: 80% full")
    fall = waterfall(
        record(
            model(1, 0, 100), EffectEntry(at=50, effect=log), LimitEntry(at=100, reason="max_turns")
        )
    )
    assert [(m.kind, m.label, m.left) for m in fall.markers] == [
        ("effect", "log · context pressure: 80% full", 50.0),
        ("limit", "limit reached: max_turns", 100.0),
    ]
