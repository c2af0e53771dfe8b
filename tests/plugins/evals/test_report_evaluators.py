"""Report evaluators: judged over the whole report, shown in render, kept in JSON,
compared against a baseline; one that raises is recorded, never aborting the report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from neuron_evals import (
    Accuracy,
    Case,
    Dataset,
    DatasetFileError,
    EqualsExpected,
    EvaluationReport,
    EvaluatorOutput,
    PassRate,
    PrecisionRecall,
    ReportEvaluator,
    ReportEvaluatorContext,
)

from layer0 import TurnInput

_ANSWERS = {"a": "spam", "b": "spam", "c": "ham", "d": "ham"}
_EXPECTED = {"a": "spam", "b": "ham", "c": "ham", "d": "spam"}


async def classify(inputs: str | TurnInput) -> object:
    """Answer each case by its name, right for `a` and `c` only."""
    return _ANSWERS[str(inputs)]


@dataclass(frozen=True)
class Seen(ReportEvaluator):
    """The names the context gave, as a label."""

    async def evaluate(self, ctx: ReportEvaluatorContext) -> EvaluatorOutput:
        """`dataset/experiment/cases`."""
        return f"{ctx.dataset_name}/{ctx.experiment_name}/{len(ctx.report.cases)}"


@dataclass(frozen=True)
class Broken(ReportEvaluator):
    """Always raises."""

    async def evaluate(self, ctx: ReportEvaluatorContext) -> EvaluatorOutput:
        """Raise."""
        raise RuntimeError("no metric today")


def _dataset(*report_evaluators: ReportEvaluator) -> Dataset:
    cases = [Case(name, name, expected_output=_EXPECTED[name]) for name in _ANSWERS]
    return Dataset(cases, name="spam", report_evaluators=report_evaluators)


def _values(report: EvaluationReport) -> dict[str, object]:
    return {name: result.value for name, result in report.analyses.items()}


def test_stock_report_evaluators_compute_their_metrics_over_all_cases() -> None:
    report = _dataset(Accuracy(), PassRate(), PrecisionRecall("spam")).evaluate_sync(classify)
    assert _values(report) == {
        "Accuracy": 0.5,
        "PassRate": 1.0,
        "PrecisionRecall_precision": 0.5,
        "PrecisionRecall_recall": 0.5,
    }


def test_the_context_names_the_dataset_and_the_experiment() -> None:
    report = _dataset(Seen()).evaluate_sync(classify, name="try-1")
    assert _values(report) == {"Seen": "spam/try-1/4"}


def test_a_report_evaluator_that_raises_is_recorded_and_the_others_still_run() -> None:
    report = _dataset(Broken(), Accuracy()).evaluate_sync(classify)
    assert _values(report) == {"Accuracy": 0.5}
    (failure,) = report.analysis_failures
    assert (failure.name, failure.error_type, failure.message) == (
        "Broken",
        "RuntimeError",
        "no metric today",
    )
    assert "  Broken raised RuntimeError: no metric today" in report.render()


def test_render_lists_the_results_and_their_change_from_a_baseline() -> None:
    report = _dataset(Accuracy(evaluation_name="acc")).evaluate_sync(classify)
    assert report.render().endswith("\nReport evaluators:\n  acc: 0.50\n")
    better = report.model_copy(
        update={"analyses": {"acc": report.analyses["acc"].model_copy(update={"value": 0.75})}}
    )
    assert "  acc: 0.50 -> 0.75 (+0.25)" in better.render(baseline=report)
    assert better.compare(report).analyses == {"acc": (0.5, 0.75)}


def test_results_round_trip_through_json_and_are_absent_without_report_evaluators() -> None:
    report = _dataset(PassRate(assertions=True)).evaluate_sync(classify)
    again = EvaluationReport.from_json(report.to_json())
    assert again.analyses == report.analyses
    plain = _dataset().evaluate_sync(classify)
    assert '"analyses"' not in plain.to_json()
    assert "Report evaluators" not in plain.render()


def test_report_evaluators_are_written_to_and_read_from_a_dataset_file_by_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "spam.yaml"
    _dataset(PrecisionRecall("spam"), PassRate(assertions=True), Seen()).to_file(path)
    assert "report_evaluators:\n- PrecisionRecall: spam\n- PassRate: true\n- Seen\n" in (
        path.read_text()
    )
    again = Dataset.from_file(path, custom_evaluators=[Seen])
    assert again.report_evaluators == (PrecisionRecall("spam"), PassRate(assertions=True), Seen())


def test_an_unknown_report_evaluator_in_a_file_names_it_and_its_place(tmp_path: Path) -> None:
    path = tmp_path / "spam.yaml"
    path.write_text("cases: [{name: a, inputs: a}]\nreport_evaluators: [Acuracy]\n")
    with pytest.raises(
        DatasetFileError, match=r"field 'report_evaluators\[0\]': unknown evaluator 'Acuracy'"
    ):
        Dataset.from_file(path)


def test_report_evaluators_given_to_evaluate_run_after_the_datasets_own() -> None:
    report = _dataset(Accuracy(), Seen()).evaluate_sync(
        classify, name="try-2", report_evaluators=[PassRate(), Seen()]
    )
    assert list(report.analyses) == ["Accuracy", "Seen", "PassRate", "Seen_2"]
    assert _values(report) == {
        "Accuracy": 0.5,
        "Seen": "spam/try-2/4",
        "PassRate": 1.0,
        "Seen_2": "spam/try-2/4",
    }


def test_report_evaluators_given_to_evaluate_are_for_that_run_only() -> None:
    dataset = _dataset(Accuracy())
    dataset.evaluate_sync(classify, report_evaluators=[PassRate()])
    assert dataset.report_evaluators == (Accuracy(),)
    assert _values(dataset.evaluate_sync(classify)) == {"Accuracy": 0.5}


async def test_a_report_evaluator_given_to_evaluate_that_raises_is_recorded() -> None:
    report = await _dataset().evaluate(classify, report_evaluators=[Broken(), Accuracy()])
    assert _values(report) == {"Accuracy": 0.5}
    assert [(f.name, f.error_type) for f in report.analysis_failures] == [
        ("Broken", "RuntimeError")
    ]


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ([PassRate], r"report_evaluators\[0\] is the class PassRate \(an instance is needed"),
        ([Accuracy(), EqualsExpected()], r"report_evaluators\[1\] is EqualsExpected\(.*\), an "),
        ("PassRate", "must be a sequence of ReportEvaluator, got 'PassRate'"),
    ],
)
def test_evaluate_refuses_what_is_no_report_evaluator_before_any_case_runs(
    given: object, says: str
) -> None:
    started: list[object] = []

    async def task(inputs: str | TurnInput) -> object:
        started.append(inputs)
        return "spam"

    with pytest.raises(TypeError, match=says):
        _dataset().evaluate_sync(task, report_evaluators=given)  # type: ignore[arg-type]
    assert started == []


def test_a_dataset_refuses_what_is_no_report_evaluator() -> None:
    with pytest.raises(TypeError, match=r"report_evaluators\[0\] is the class Accuracy"):
        Dataset([], report_evaluators=[Accuracy])  # type: ignore[list-item]
