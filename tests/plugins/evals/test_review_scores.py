"""An evaluator's score that is no finite number is its failure, not a NaN in the report."""

from __future__ import annotations

import json
import reprlib

import pytest
from neuron_evals import (
    Case,
    Dataset,
    EvalRecordError,
    EvaluatorContext,
    evaluator,
    increment_eval_metric,
)


def _refuse(constant: str) -> object:
    raise AssertionError(f"the report's JSON holds {constant}")


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), float("-inf"), -(10**400)],
    ids=["nan", "inf", "-inf", "-10**400"],
)
async def test_a_score_that_is_no_finite_number_is_the_evaluators_failure(
    value: float,
) -> None:
    @evaluator
    def ratio(ctx: EvaluatorContext) -> float:
        return value if ctx.output == "odd" else 0.5

    async def echo(inputs: object) -> object:
        return inputs

    dataset = Dataset(cases=[Case("odd", "odd"), Case("fine", "fine")], evaluators=[ratio])
    report = await dataset.evaluate(echo)
    odd, fine = report.cases
    assert odd.scores == {}
    (failure,) = odd.evaluator_failures
    assert failure.error_type == "ValueError"
    assert failure.message == (
        f"returned {reprlib.repr(value)} for 'ratio'; a score must be a finite number "
        "a float can hold"
    )
    assert fine.scores["ratio"].value == 0.5
    assert report.summary().mean_scores == {"ratio": 0.5}
    json.loads(report.to_json(), parse_constant=_refuse)


async def test_a_metric_past_what_a_float_holds_is_refused_as_the_record_error_it_is() -> None:
    refused: list[str] = []

    async def counting(inputs: object) -> object:
        try:
            increment_eval_metric("digits", 10**400)
        except EvalRecordError as exc:
            refused.append(str(exc))
        increment_eval_metric("big", 10**308)
        try:
            increment_eval_metric("big", 10**308)  # the sum is past any float
        except EvalRecordError as exc:
            refused.append(str(exc))
        return inputs

    report = await Dataset(cases=[Case("c", "hi")]).evaluate(counting)
    assert [message.split(": ", 1)[0] for message in refused] == [
        "eval metric 'digits'",
        "eval metric 'big'",
    ]
    assert "is not finite" in refused[0] and "overflows" in refused[1]
    (case,) = report.cases
    assert case.task_error is None and case.metrics == {"big": 10**308}
    assert report.summary().mean_metrics == {"big": 1e308}
