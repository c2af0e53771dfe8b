"""A task's or evaluator's error keeps its stack trace, as pydantic-evals' `error_stacktrace`:
formatted where it was caught, its end kept when long, in the report's JSON, not its table."""

from __future__ import annotations

import json
from dataclasses import dataclass

from neuron_evals import (
    Case,
    Dataset,
    EvaluationReport,
    EvaluatorContext,
    EvaluatorOutput,
    ReportEvaluator,
    ReportEvaluatorContext,
    evaluator,
)
from neuron_evals._span_attributes import MAX_ATTRIBUTE_CHARS, bounded_tail

from layer0 import TurnInput


def _look_up(item: str) -> str:
    raise KeyError(item)


async def priced(inputs: str | TurnInput) -> str:
    """A task whose error is raised from another, with a cause."""
    try:
        return _look_up(str(inputs))
    except KeyError as missing:
        raise ValueError(f"no price for {inputs}") from missing


@evaluator
def picky(ctx: EvaluatorContext) -> bool:
    raise RuntimeError("cannot judge")


@evaluator
def shapeless(ctx: EvaluatorContext) -> EvaluatorOutput:
    return [1, 2]  # type: ignore[return-value]


async def test_a_task_s_error_keeps_its_stack_trace_naming_where_it_was_raised() -> None:
    report = await Dataset([Case("tea", "tea")]).evaluate(priced)

    error = report.case("tea").task_error
    assert error is not None and error.stacktrace is not None
    trace = error.stacktrace
    assert trace.startswith("Traceback (most recent call last):\n")
    assert ", in _look_up\n" in trace and ", in priced\n" in trace
    assert "The above exception was the direct cause of the following exception" in trace
    assert trace.endswith("ValueError: no price for tea\n")


async def test_an_evaluator_s_error_keeps_its_stack_trace_from_where_it_raised() -> None:
    async def echo(inputs: str | TurnInput) -> str:
        return str(inputs)

    report = await Dataset([Case("tea", "tea")], evaluators=[picky, shapeless]).evaluate(echo)

    raised, returned = report.case("tea").evaluator_failures
    assert raised.stacktrace is not None and returned.stacktrace is not None
    assert ", in picky\n" in raised.stacktrace
    assert raised.stacktrace.endswith("RuntimeError: cannot judge\n")
    # Nothing raised in the evaluator: the trace is of the check that refused what it returned.
    assert ", in results_of\n" in returned.stacktrace
    assert returned.stacktrace.endswith("TypeError: returned list, not bool, int, float or str\n")


@dataclass(frozen=True)
class Broken(ReportEvaluator):
    """A report evaluator that raises."""

    async def evaluate(self, ctx: ReportEvaluatorContext) -> EvaluatorOutput:
        raise ZeroDivisionError("no cases to divide by")


async def test_a_report_evaluator_s_error_keeps_its_stack_trace_too() -> None:
    async def echo(inputs: str | TurnInput) -> str:
        return str(inputs)

    report = await Dataset([Case("tea", "tea")], report_evaluators=[Broken()]).evaluate(echo)

    (failure,) = report.analysis_failures
    assert failure.stacktrace is not None and ", in evaluate\n" in failure.stacktrace
    assert failure.stacktrace.endswith("ZeroDivisionError: no cases to divide by\n")


async def test_a_long_stack_trace_keeps_its_end_within_the_bound() -> None:
    async def loud(inputs: str | TurnInput) -> str:
        raise ValueError("x" * 50_000 + " the end")

    report = await Dataset([Case("tea", "tea")]).evaluate(loud)

    error = report.case("tea").task_error
    assert error is not None and error.stacktrace is not None
    assert len(error.stacktrace) == MAX_ATTRIBUTE_CHARS
    assert error.stacktrace.startswith("[cut: ")
    assert error.stacktrace.endswith("xxx the end\n")


def test_bounding_a_bounded_text_again_leaves_it_as_it_is() -> None:
    long = "a" * 10_000 + "b" * 100
    once = bounded_tail(long)
    assert once == f"[cut: 10100 characters in all] ...{long[-(len(once) - 34) :]}"
    assert once.endswith("b" * 100) and len(once) == MAX_ATTRIBUTE_CHARS
    assert bounded_tail(once) == once
    assert bounded_tail("short") == "short"


async def test_stack_traces_are_in_the_report_s_json_but_not_its_table() -> None:
    report = await Dataset([Case("tea", "tea")]).evaluate(priced)

    text = report.to_json()

    stored = json.loads(text)["cases"][0]["task_error"]["stacktrace"]
    assert stored.endswith("ValueError: no price for tea\n")
    assert EvaluationReport.from_json(text) == report
    assert "Traceback" not in report.render()
    assert "the task raised ValueError: no price for tea" in report.render()
