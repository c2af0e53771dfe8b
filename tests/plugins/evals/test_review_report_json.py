"""`EvaluationReport.from_json` refuses what is no report with a `ValidationError`, as it says."""

from __future__ import annotations

import pytest
from neuron_evals import Case, Dataset, EvaluationReport, EvaluatorContext, evaluator
from pydantic import ValidationError


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json", "Invalid JSON: Expecting value"),
        ("[" * 100_000 + "]" * 100_000, "Invalid JSON: nested too deeply"),
        (b"\xff\xfe{", "Invalid JSON"),
    ],
)
def test_text_that_is_no_json_is_a_validation_error(text: str | bytes, says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        EvaluationReport.from_json(text)


async def _report_json() -> str:
    @evaluator
    def half(ctx: EvaluatorContext) -> float:
        return 0.5

    async def echo(inputs: object) -> object:
        return inputs

    report = await Dataset(cases=[Case("c", "hi")], evaluators=[half]).evaluate(echo)
    return report.to_json()


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("NaN", "finite number"),
        ("1e999", "finite number"),
        ("1" + "0" * 400, "an int of about 400 digits is past what a float holds"),
    ],
)
async def test_a_baseline_whose_score_no_float_holds_is_refused(value: str, says: str) -> None:
    text = (await _report_json()).replace('"value": 0.5', f'"value": {value}')
    with pytest.raises(ValidationError, match=says):
        EvaluationReport.from_json(text)


async def test_a_baseline_whose_metric_no_float_holds_is_refused() -> None:
    text = (await _report_json()).replace(
        '"scores": {', '"metrics": {"n": 1' + "0" * 400 + '}, "scores": {', 1
    )
    with pytest.raises(ValidationError, match="past what a float holds"):
        EvaluationReport.from_json(text)


async def test_a_report_with_a_score_reads_back_and_compares() -> None:
    text = await _report_json()
    again = EvaluationReport.from_json(text)
    assert again.cases[0].scores["half"].value == 0.5
    assert "half=0.50" in again.render(baseline=again)
