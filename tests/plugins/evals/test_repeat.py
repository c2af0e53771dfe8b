"""`Dataset.evaluate(repeat=n)`: each case runs n times, each run its own `ReportCase`,
the report aggregates per case, JSON and compare keep working by run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from neuron_evals import Case, Dataset, EvaluationReport, EvaluatorContext, evaluator

from layer0 import TurnInput, TurnMetadata, TurnOutput, usd


@evaluator
def says_a(ctx: EvaluatorContext) -> bool:
    """The answer is `a`."""
    return ctx.output == "a"


def _alternating() -> Callable[[str | TurnInput], Awaitable[object]]:
    calls = 0

    async def task(inputs: str | TurnInput) -> object:
        nonlocal calls
        calls += 1
        return "a" if calls % 2 else "b"

    return task


def _report() -> EvaluationReport:
    dataset = Dataset([Case("x", "q"), Case("y", "q")], evaluators=[says_a])
    return dataset.evaluate_sync(_alternating(), name="runs", repeat=3, max_concurrency=1)


def test_each_run_is_its_own_case_named_with_its_index() -> None:
    report = _report()
    assert [case.name for case in report.cases] == [
        "x [1/3]",
        "x [2/3]",
        "x [3/3]",
        "y [1/3]",
        "y [2/3]",
        "y [3/3]",
    ]
    assert [(case.source_case, case.run) for case in report.runs("y")] == [
        ("y", 1),
        ("y", 2),
        ("y", 3),
    ]


def test_case_summaries_aggregate_each_case_over_its_runs() -> None:
    summaries = _report().case_summaries()
    assert (summaries["x"].cases, summaries["x"].passed) == (3, 2)
    assert (summaries["y"].assertions_passed, summaries["y"].assertions_total) == (1, 3)


def test_render_shows_the_aggregate_across_runs() -> None:
    text = _report().render()
    assert "Across runs:\n  x: 3 runs; passed 2/3 (66.7%); assertions 2/3 (66.7%)" in text
    assert "  y: 3 runs; passed 1/3 (33.3%)" in text


def test_repeated_runs_round_trip_through_json_and_compare_by_run() -> None:
    report = _report()
    again = EvaluationReport.from_json(report.to_json())
    assert again.runs("x")[1].run == 2
    comparison = report.compare(again)
    assert [change.name for change in comparison.cases][:2] == ["x [1/3]", "x [2/3]"]
    assert comparison.added == comparison.removed == []


def test_a_single_run_s_json_has_no_run_fields() -> None:
    report = Dataset([Case("x", "q")]).evaluate_sync(_alternating())
    assert '"source_case"' not in report.to_json()
    assert "Across runs" not in report.render()


@pytest.mark.parametrize("repeat", [0, -2])
def test_a_repeat_below_one_is_refused_naming_the_value(repeat: int) -> None:
    with pytest.raises(ValueError, match=f"repeat must be at least 1, got {repeat}"):
        Dataset([Case("x", "q")]).evaluate_sync(_alternating(), repeat=repeat)


def test_the_aggregate_shows_the_mean_cost_of_the_runs_that_have_one() -> None:
    costs = iter(["0.002", "0.004"])

    async def priced(inputs: str | TurnInput) -> object:
        metadata = TurnMetadata.zero().model_copy(update={"cost": usd(next(costs))})
        return TurnOutput(message="ok", exit_reason="complete", metadata=metadata)

    report = Dataset([Case("x", "q")]).evaluate_sync(priced, repeat=2, max_concurrency=1)
    assert "  x: 2 runs; passed 2/2 (100.0%); assertions 0/0; mean cost $0.003;" in report.render()
