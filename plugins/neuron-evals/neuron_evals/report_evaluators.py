"""The stock report evaluators: `PassRate`, `Accuracy`, `PrecisionRecall`."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from .evaluator import EvaluatorOutput
from .report_evaluator import ReportEvaluator, ReportEvaluatorContext

__all__ = ["Accuracy", "PassRate", "PrecisionRecall"]


@dataclass(frozen=True)
class PassRate(ReportEvaluator):
    """The share of cases that passed, or with `assertions=True` of assertions that held."""

    assertions: bool = False
    evaluation_name: str | None = None

    async def evaluate(self, ctx: ReportEvaluatorContext) -> EvaluatorOutput:
        """`passed / cases` (0 with no cases), or the assertion pass rate (1 with none)."""
        summary = ctx.report.summary()
        return summary.assertion_pass_rate if self.assertions else summary.pass_rate


@dataclass(frozen=True)
class Accuracy(ReportEvaluator):
    """The share of cases with an expected output whose answer equals it (0 with none)."""

    evaluation_name: str | None = None

    async def evaluate(self, ctx: ReportEvaluatorContext) -> EvaluatorOutput:
        """`right / cases with an expected output`, comparing the answers as JSON."""
        judged = [case for case in ctx.report.cases if case.expected_output is not None]
        right = sum(1 for case in judged if case.output == case.expected_output)
        return right / len(judged) if judged else 0.0


@dataclass(frozen=True)
class PrecisionRecall(ReportEvaluator):
    """Precision and recall of answering `positive`, against the expected outputs.

    For a classifier: a case is predicted positive when its answer equals
    `positive`, and truly positive when its expected output does. Cases with no
    expected output are left out; each rate is 0 when its denominator is.
    """

    positive: JsonValue
    evaluation_name: str | None = None

    async def evaluate(self, ctx: ReportEvaluatorContext) -> EvaluatorOutput:
        """`{name}_precision` and `{name}_recall` (name: `evaluation_name` or `PrecisionRecall`)."""
        judged = [case for case in ctx.report.cases if case.expected_output is not None]
        predicted = [case for case in judged if case.output == self.positive]
        actual = [case for case in judged if case.expected_output == self.positive]
        hits = sum(1 for case in predicted if case.expected_output == self.positive)
        name = self.result_name()
        return {
            f"{name}_precision": hits / len(predicted) if predicted else 0.0,
            f"{name}_recall": hits / len(actual) if actual else 0.0,
        }
