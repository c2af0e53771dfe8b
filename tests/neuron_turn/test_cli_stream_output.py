"""What `neuron-turn run` prints of a turn's events: activity lines and JSON lines."""

from __future__ import annotations

import io
import json
import math

import pytest

from layer0 import (
    BudgetAction,
    BudgetWarning,
    CompactionComplete,
    ContextPressure,
    CostIncurred,
    CustomScope,
    PreCompactionFlush,
    TurnMetadata,
    TurnOutput,
    usd,
)
from neuron_hooks import LifecycleEvent
from neuron_turn import Lifecycle, ModelCallStart, ProviderRequest, TextDelta, ToolStart
from neuron_turn.cli._stream_output import JsonLinesPrinter, TextPrinter, describe


@pytest.mark.parametrize(
    ("event", "line"),
    [
        (
            ContextPressure(agent="a", fill_percent=81.5, tokens_used=815, tokens_available=185),
            "[context] 82% full (815 tokens, 185 left)",
        ),
        (PreCompactionFlush(agent="a", scope=CustomScope(name="turn")), "[context] compacting"),
        (
            CompactionComplete(agent="a", strategy="SlidingWindow", tokens_freed=400),
            "[context] SlidingWindow freed 400 tokens",
        ),
        (
            BudgetWarning(workflow="w", spent=usd("0.8"), limit=usd("1")),
            "[budget] $0.8000 of $1.0000 spent",
        ),
        (BudgetAction(workflow="w", action="halt_workflow"), "[budget] halt_workflow"),
    ],
)
def test_each_context_and_budget_event_has_its_own_activity_line(
    event: LifecycleEvent, line: str
) -> None:
    assert describe(Lifecycle(event)) == line


def test_a_cost_event_has_no_line_of_its_own_as_the_model_call_line_shows_the_cost() -> None:
    event = CostIncurred(agent="a", cost=usd("0.01"), cumulative=usd("0.02"))
    assert describe(Lifecycle(event)) is None


def test_a_json_line_writes_a_models_nan_and_infinity_as_null_like_the_wire() -> None:
    out = io.StringIO()
    JsonLinesPrinter(out)(ToolStart("c1", "add", {"a": math.nan, "b": [math.inf], "c": "é"}))

    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    line = json.loads(out.getvalue(), parse_constant=refuse)
    assert line == {
        "type": "tool_start",
        "id": "c1",
        "name": "add",
        "input": {"a": None, "b": [None], "c": "é"},
    }


def _done(text: str, reason: str = "complete") -> TurnOutput:
    metadata = TurnMetadata(
        tokens_in=0, tokens_out=0, cost=usd("0"), turns_used=1, tools_called=[], duration=1
    )
    return TurnOutput(message=text, exit_reason=reason, metadata=metadata)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("streamed", "answer", "printed"),
    [
        (["It is ", "42."], "It is 42.", "It is 42.\n"),
        (
            ["It is 42 [1]."],
            "It is 42 [1: the manual].",
            "It is 42 [1].\nIt is 42 [1: the manual].\n",
        ),
        (["Let me look."], "order A7: shipped", "Let me look.\norder A7: shipped\n"),
        ([], "order A7: shipped", "order A7: shipped\n"),
    ],
    ids=["as-streamed", "a-validator-changed-it", "a-stop-tools-result", "nothing-streamed"],
)
def test_the_answer_is_printed_again_when_it_is_not_what_the_last_call_streamed(
    streamed: list[str], answer: str, printed: str
) -> None:
    out = io.StringIO()
    printer = TextPrinter(out, io.StringIO(), progress=False)
    printer(ModelCallStart(1, ProviderRequest(model="m", messages=[])))
    for piece in streamed:
        printer(TextDelta(piece))
    printer.finish(_done(answer))
    assert out.getvalue() == printed


def test_a_turn_that_did_not_complete_is_not_printed_again() -> None:
    out = io.StringIO()
    printer = TextPrinter(out, io.StringIO(), progress=False)
    printer(TextDelta("classified plans"))
    printer.finish(_done("Stopped by guardrail 'x' on the answer: no", "max_turns"))
    assert out.getvalue() == "classified plans\n"
