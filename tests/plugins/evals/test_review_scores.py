"""An evaluator's score that is no finite number is its failure, not a NaN in the report."""

from __future__ import annotations

import json

import pytest
from neuron_evals import Case, Dataset, EvaluatorContext, evaluator


def _refuse(constant: str) -> object:
    raise AssertionError(f"the report's JSON holds {constant}")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
async def test_a_score_that_is_no_finite_number_is_the_evaluators_failure(value: float) -> None:
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
    assert failure.message == f"returned {value!r} for 'ratio'; a score must be a finite number"
    assert fine.scores["ratio"].value == 0.5
    assert report.summary().mean_scores == {"ratio": 0.5}
    json.loads(report.to_json(), parse_constant=_refuse)
