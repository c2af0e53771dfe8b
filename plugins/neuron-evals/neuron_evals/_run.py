"""One case's run: the task, then its evaluators, into a `ReportCase` (private)."""

from __future__ import annotations

import asyncio
import math
import reprlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

from pydantic import JsonValue

from layer0 import Turn, TurnInput, TurnOutput, usd
from neuron_turn import NeuronTurn, OutputMissingError, output_value

from ._json import as_text, to_json_value
from ._raised import Raised
from ._run_spans import CaseSpan, RunSpans
from ._span_capture import case_spans
from ._span_metrics import record_span_metrics
from ._specified import Specified
from .case import Case
from .context import EvaluatorContext, exit_reason_text
from .evaluator import EvaluationReason, EvaluationScalar, Evaluator, EvaluatorOutput
from .report_case import EvaluationResult, EvaluatorFailure, ReportCase, TaskError
from .task_record import recording

TaskFunction: TypeAlias = Callable[[str | TurnInput], Awaitable[object]]
"""An async function of a case's inputs: returns a `TurnOutput` or any answer."""
Task: TypeAlias = Turn | TaskFunction
"""What a dataset is evaluated against: any `layer0.Turn`, or an async function."""


def task_name(task: Task) -> str:
    """A name for the run: the function's, or the turn's class."""
    name = getattr(task, "__name__", None)
    return name if isinstance(name, str) else type(task).__name__


def _answer(task: Task, output: TurnOutput) -> object:
    """The answer evaluators see: typed, else the turn's JSON result, else the text."""
    if isinstance(task, NeuronTurn) and task.output is not None:
        try:
            return task.output_value(output)
        except OutputMissingError:
            return None
    try:
        return output_value(output)
    except OutputMissingError:
        return output.message.as_text() or ""


async def _call(task: Task, case: Case) -> tuple[object, TurnOutput | None]:
    if isinstance(task, Turn):
        output = await task.execute(case.turn_input())
        return _answer(task, output), output
    result = await task(case.inputs)
    if isinstance(result, TurnOutput):
        return _answer(task, result), result
    return result, None


async def _evaluate(
    evaluator: Evaluator, ctx: EvaluatorContext, span: CaseSpan
) -> EvaluatorOutput | Raised:
    try:
        with span.evaluator(evaluator.result_name()):
            return await evaluator.evaluate(ctx)
    except Exception as exc:  # an evaluator's failure is its result for this case
        return Raised.of(exc)


def results_of(
    evaluator: Specified, output: EvaluatorOutput
) -> list[tuple[str, EvaluationScalar, str | None]]:
    """The `(name, value, reason)` results in what `evaluator` returned.

    Raises:
        TypeError: a value is not a bool, int, float or str.
        ValueError: a value is a NaN or infinite float, or an int no float can hold.
    """
    items = output.items() if isinstance(output, dict) else [(evaluator.result_name(), output)]
    found: list[tuple[str, EvaluationScalar, str | None]] = []
    for name, item in items:
        value, reason = (
            (item.value, item.reason)
            if isinstance(item, EvaluationReason)
            else (
                item,
                None,
            )
        )
        if not isinstance(value, bool | int | float | str):
            raise TypeError(f"returned {type(value).__name__}, not bool, int, float or str")
        if isinstance(value, int | float) and not isinstance(value, bool) and not _finite(value):
            # A mean over it would be NaN too (or overflow, for an int past any float), and
            # a report's JSON has no NaN or infinity.
            raise ValueError(
                f"returned {reprlib.repr(value)} for {name!r}; a score must be a finite "
                "number a float can hold"
            )
        found.append((name, value, reason))
    return found


def _finite(value: int | float) -> bool:
    """Whether `value` is a finite number a float holds (an int past 1.8e308 is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def unique_name(name: str, taken: set[str]) -> str:
    """`name`, else `name_2`, `name_3`... the first not in `taken` (which it joins)."""
    unique, count = name, 1
    while unique in taken:
        count += 1
        unique = f"{name}_{count}"
    taken.add(unique)
    return unique


def _reported(answer: object) -> tuple[JsonValue, str]:
    """The answer as the report holds it: JSON, and as text.

    Raises:
        ValueError: it has no JSON form (an int of more than 4300 digits, an object
            whose `str` raises): the case's error, not the end of the run.
    """
    try:
        output = to_json_value(answer)
        return output, as_text(output)
    except Exception as exc:
        raise ValueError(f"the task's answer cannot be written as JSON: {exc}") from exc


def _facts(output: TurnOutput | None) -> dict[str, object]:
    if output is None:
        return {}
    metadata = output.metadata
    return {
        "exit_reason": exit_reason_text(output.exit_reason),
        "cost": metadata.cost,
        "tokens_in": metadata.tokens_in,
        "tokens_out": metadata.tokens_out,
        "turns_used": metadata.turns_used,
        "tools_called": [record.name for record in metadata.tools_called],
    }


def gather_results(
    evaluators: Sequence[Specified], outcomes: Sequence[EvaluatorOutput | Raised]
) -> tuple[list[EvaluationResult], list[EvaluatorFailure]]:
    """The results of `evaluators` from what each returned or raised, names made unique.

    An evaluator that raised, or returned something other than scalars,
    becomes an `EvaluatorFailure` naming its exception, with its stack trace.
    """
    found: list[EvaluationResult] = []
    failures: list[EvaluatorFailure] = []
    taken: set[str] = set()
    for evaluator, outcome in zip(evaluators, outcomes, strict=True):
        try:
            results = [] if isinstance(outcome, Raised) else results_of(evaluator, outcome)
        except Exception as exc:  # what it returned is refused: its failure, as a raise is
            outcome = Raised.of(exc)
        if isinstance(outcome, Raised):
            failures.append(
                EvaluatorFailure(
                    name=unique_name(evaluator.result_name(), taken),
                    source=evaluator.spec_name(),
                    error_type=outcome.error_type,
                    message=outcome.message,
                    stacktrace=outcome.stacktrace,
                )
            )
            continue
        for name, value, reason in results:
            unique = unique_name(name, taken)
            found.append(
                EvaluationResult(
                    name=unique, value=value, reason=reason, source=evaluator.spec_name()
                )
            )
    return found, failures


async def run_case(
    task: Task,
    case: Case,
    evaluators: Sequence[Evaluator],
    *,
    spans: RunSpans | None = None,
    name: str | None = None,
) -> ReportCase:
    """Run `task` on `case`, then every evaluator; an exception becomes part of the report.

    With `spans`, the case has a span of its own, named after the run `name`
    (default: the case's), that is current while the task and evaluators run.
    """
    with (spans or RunSpans()).case(name or case.name, case, task_name=task_name(task)) as span:
        done = await _run_case(task, case, evaluators, span)
        span.finish(done)
    return done


async def _run_case(
    task: Task, case: Case, evaluators: Sequence[Evaluator], span: CaseSpan
) -> ReportCase:
    common = {
        "name": case.name,
        "inputs": case.inputs,
        "expected_output": to_json_value(case.expected_output),
        "metadata": to_json_value(dict(case.metadata)),
    }
    start = time.perf_counter()
    # The record is current while the task runs only: evaluators record nothing.
    with recording() as record:
        try:
            with case_spans() as spans:
                answer, turn_output = await _call(task, case)
            tree = spans.result()
            # Once the task is done, as pydantic-evals: its own increments come first.
            record_span_metrics(record, tree)
            output, shown = _reported(answer)
        except Exception as exc:  # a failing case never stops the others
            raised = Raised.of(exc)
            return ReportCase.model_validate(
                {
                    **common,
                    "duration": time.perf_counter() - start,
                    "task_error": TaskError(
                        error_type=raised.error_type,
                        message=raised.message,
                        stacktrace=raised.stacktrace,
                    ),
                    "attributes": record.attributes(),
                    "metrics": record.metrics(),
                }
            )
    duration = time.perf_counter() - start
    text = None if turn_output is None else turn_output.message.as_text()
    ctx = EvaluatorContext(
        name=case.name,
        inputs=case.inputs,
        output=answer,
        output_text=text or ("" if answer is None else shown),
        expected_output=case.expected_output,
        metadata=case.metadata,
        turn_output=turn_output,
        duration=duration,
        spans=tree,
        attributes=record.attributes(),
        metrics=record.metrics(),
    )
    async with asyncio.TaskGroup() as group:
        running = [group.create_task(_evaluate(evaluator, ctx, span)) for evaluator in evaluators]
    results, failures = gather_results(evaluators, [done.result() for done in running])
    buckets: dict[str, dict[str, EvaluationResult]] = {"assertions": {}, "scores": {}, "labels": {}}
    for result in results:
        value = result.value
        kind = (
            "assertions"
            if isinstance(value, bool)
            else "labels"
            if isinstance(value, str)
            else "scores"
        )
        buckets[kind][result.name] = result
    evaluator_cost = usd()
    for cost in ctx.evaluator_costs:
        evaluator_cost = evaluator_cost + cost
    return ReportCase.model_validate(
        {
            **common,
            **_facts(turn_output),
            **buckets,
            "output": output,
            "output_text": ctx.output_text,
            "duration": duration,
            "attributes": record.attributes(),
            "metrics": record.metrics(),
            "evaluator_failures": failures,
            "evaluator_cost": evaluator_cost,
        }
    )
