"""`ReportSummary`: the totals and averages of a report's cases."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from statistics import fmean

from moneyed import Money
from pydantic import BaseModel, ConfigDict, Field

from layer0 import Cost, usd

from .report_case import ReportCase

__all__ = ["ReportSummary", "summarize"]


class ReportSummary(BaseModel):
    """The totals and averages of a report."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cases: int
    passed: int
    """Cases that passed (see `ReportCase.passed`)."""
    pass_rate: float
    """`passed / cases` (0 when there are no cases)."""
    errors: int
    """Cases whose task raised."""
    assertions_passed: int
    assertions_total: int
    assertion_pass_rate: float
    """`assertions_passed / assertions_total` (1 when there are none)."""
    mean_scores: dict[str, float]
    """Each score's mean over the cases that have it."""
    mean_metrics: dict[str, float] = Field(default_factory=dict)
    """Each metric's mean over the cases whose task recorded it (`increment_eval_metric`)."""
    total_cost: Cost
    """What the tasks spent (USD)."""
    evaluator_cost: Cost
    """What evaluators spent (USD), apart from `total_cost`."""
    tokens_in: int
    tokens_out: int
    total_duration: float
    """The sum of the cases' durations (seconds)."""
    mean_duration: float
    """Their mean (0 when there are no cases)."""


def summarize(cases: Sequence[ReportCase]) -> ReportSummary:
    """Return the totals and averages of `cases`."""
    passed = sum(1 for case in cases if case.passed)
    asserted = sum(case.assertions_passed for case in cases)
    total = sum(case.assertions_total for case in cases)
    scores: dict[str, list[float]] = {}
    metrics: dict[str, list[float]] = {}
    for case in cases:
        for name, result in case.scores.items():
            scores.setdefault(name, []).append(float(result.value))
        for name, value in case.metrics.items():
            metrics.setdefault(name, []).append(float(value))
    durations = [case.duration for case in cases]
    return ReportSummary(
        cases=len(cases),
        passed=passed,
        pass_rate=passed / len(cases) if cases else 0.0,
        errors=sum(1 for case in cases if case.task_error is not None),
        assertions_passed=asserted,
        assertions_total=total,
        assertion_pass_rate=asserted / total if total else 1.0,
        mean_scores={name: fmean(values) for name, values in scores.items()},
        mean_metrics={name: fmean(values) for name, values in metrics.items()},
        total_cost=_sum(case.cost for case in cases if case.cost is not None),
        evaluator_cost=_sum(case.evaluator_cost for case in cases),
        tokens_in=sum(case.tokens_in or 0 for case in cases),
        tokens_out=sum(case.tokens_out or 0 for case in cases),
        total_duration=sum(durations),
        mean_duration=fmean(durations) if durations else 0.0,
    )


def _sum(costs: Iterable[Money]) -> Money:
    total = usd()
    for cost in costs:
        total = total + cost
    return total
