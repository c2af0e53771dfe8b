"""An answer or attribute with no JSON form fails its case only; the run and its report go on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neuron_evals import Case, Dataset, EvalRecordError, EvaluationReport, set_eval_attribute


class Unprintable:
    """An answer whose text cannot be made."""

    def __str__(self) -> str:
        raise RuntimeError("no text for this")


@pytest.mark.parametrize("answer", [10**5_000, Unprintable()], ids=["5000-digit int", "no str"])
async def test_an_answer_with_no_json_form_is_its_cases_error(answer: object) -> None:
    async def task(inputs: object) -> object:
        return answer if inputs == "odd" else inputs

    report = await Dataset(cases=[Case("odd", "odd"), Case("fine", "fine")]).evaluate(task)
    odd, fine = report.cases
    assert odd.task_error is not None and odd.task_error.error_type == "ValueError"
    assert odd.task_error.message.startswith("the task's answer cannot be written as JSON: ")
    assert fine.task_error is None and fine.output == "fine"
    assert "the task's answer cannot be written" in report.render()
    assert json.loads(report.to_json())["cases"][1]["output"] == "fine"


async def test_an_attribute_int_too_long_to_write_is_refused_when_recorded() -> None:
    refused: list[str] = []

    async def task(inputs: object) -> object:
        try:
            set_eval_attribute("n", 10**5_000)
        except EvalRecordError as exc:
            refused.append(str(exc))
        set_eval_attribute("m", 10**4_000)
        return inputs

    report = await Dataset(cases=[Case("c", "hi")]).evaluate(task)
    assert refused == [
        "eval attribute 'n': the value is an int of about 5000 digits; "
        "write one of at most 4200 digits (or as a string)"
    ]
    assert report.cases[0].attributes == {"m": 10**4_000}
    assert json.loads(report.to_json())["cases"][0]["attributes"]["m"] == 10**4_000
    assert "m=" in report.render()


async def test_a_lone_surrogate_in_an_answer_is_escaped_so_the_report_writes_as_utf8(
    tmp_path: Path,
) -> None:
    async def task(inputs: object) -> str:
        return "a\ud800b \U0001f600"  # a broken escape from a model, and an emoji

    report = await Dataset(cases=[Case("c", "hi")]).evaluate(task)
    path = tmp_path / "report.json"
    path.write_text(report.to_json(), encoding="utf-8")
    again = EvaluationReport.from_json(path.read_text(encoding="utf-8"))
    assert again.cases[0].output == "a\ud800b \U0001f600"
    shown = report.render()
    shown.encode("utf-8")
    assert r"a\ud800b" in shown and "\U0001f600" in shown


class Garbled(Exception):
    """An exception whose message cannot be made."""

    def __str__(self) -> str:
        raise RuntimeError("no message")


async def test_a_task_raising_an_exception_with_no_message_is_its_cases_error() -> None:
    async def task(inputs: object) -> object:
        if inputs == "odd":
            raise Garbled
        return inputs

    report = await Dataset(cases=[Case("odd", "odd"), Case("fine", "fine")]).evaluate(task)
    odd, fine = report.cases
    assert odd.task_error is not None and odd.task_error.error_type == "Garbled"
    assert odd.task_error.message == "<its message could not be made: RuntimeError>"
    assert fine.output == "fine"
