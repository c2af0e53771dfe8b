"""`ReportEvaluator`: a check over a whole report, after every case ran (pydantic-evals' kind)."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from ._raised import Raised
from ._run import gather_results
from ._specified import Specified
from .evaluator import EvaluatorOutput
from .report import EvaluationReport

__all__ = ["ReportEvaluator", "ReportEvaluatorContext", "run_report_evaluators"]


@dataclass(frozen=True, kw_only=True)
class ReportEvaluatorContext:
    """What a report evaluator sees: the finished report and the names of the run."""

    report: EvaluationReport
    """Every case's results (each run its own case when runs were repeated)."""
    dataset_name: str | None
    """The dataset's name, when it has one."""
    experiment_name: str
    """The run's name (`evaluate(name=...)`, else the dataset's or the task's)."""


class ReportEvaluator(Specified, ABC):
    """The base of report evaluators: `async evaluate(ctx)` judges the whole report.

    It returns what a case's `Evaluator` does, a scalar or several by name
    (accuracy, a pass rate, precision and recall); the report keeps them under
    `analyses`. Like an `Evaluator`, a frozen dataclass subclass can be named
    in a dataset file under `report_evaluators`.
    """

    @abstractmethod
    async def evaluate(self, ctx: ReportEvaluatorContext) -> EvaluatorOutput:
        """Judge the report in `ctx`: a number (a metric), a str (a label), a bool."""


async def _outcome(
    evaluator: ReportEvaluator, ctx: ReportEvaluatorContext
) -> EvaluatorOutput | Raised:
    try:
        return await evaluator.evaluate(ctx)
    except Exception as exc:  # a report evaluator's failure is its result, never the run's
        return Raised.of(exc)


async def run_report_evaluators(
    report: EvaluationReport, evaluators: Sequence[ReportEvaluator], dataset_name: str | None
) -> EvaluationReport:
    """Return `report` with the results and failures of `evaluators` over it."""
    if not evaluators:
        return report
    ctx = ReportEvaluatorContext(
        report=report, dataset_name=dataset_name, experiment_name=report.name
    )
    async with asyncio.TaskGroup() as group:
        running = [group.create_task(_outcome(evaluator, ctx)) for evaluator in evaluators]
    results, failures = gather_results(evaluators, [done.result() for done in running])
    analyses = {result.name: result for result in results}
    return report.model_copy(update={"analyses": analyses, "analysis_failures": failures})
