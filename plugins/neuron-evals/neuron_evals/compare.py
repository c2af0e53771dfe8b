"""`ReportComparison`: what changed between a baseline run and this one, case by case."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from moneyed import Money

from .evaluator import EvaluationScalar
from .report_case import EvaluationResult, ReportCase

__all__ = ["CaseChange", "ReportComparison", "compare_cases"]


@dataclass(frozen=True)
class CaseChange:
    """One case in both runs: `(before, after)` for what the report shows."""

    name: str
    passed: tuple[bool, bool]
    """Whether the case passed in the baseline, and now."""
    assertions: dict[str, tuple[bool | None, bool | None]] = field(default_factory=dict)
    """Each assertion's value before and now (None: not there)."""
    scores: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """Each score before and now (None: not there)."""
    metrics: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """Each metric the task recorded (`increment_eval_metric`) before and now (None: not there)."""
    cost: tuple[Money | None, Money | None] = (None, None)
    duration: tuple[float, float] = (0.0, 0.0)

    @property
    def regressed(self) -> bool:
        """It passed in the baseline and fails now."""
        return self.passed == (True, False)

    @property
    def fixed(self) -> bool:
        """It failed in the baseline and passes now."""
        return self.passed == (False, True)


@dataclass(frozen=True)
class ReportComparison:
    """A report against its baseline: the cases in both, and those only in one."""

    cases: list[CaseChange]
    """The cases in both runs, in this run's order."""
    added: list[str]
    """Cases only in this run."""
    removed: list[str]
    """Cases only in the baseline."""
    analyses: dict[str, tuple[EvaluationScalar | None, EvaluationScalar | None]] = field(
        default_factory=dict
    )
    """Each report evaluator's result before and now (None: not there)."""

    @property
    def regressions(self) -> list[CaseChange]:
        """The cases that passed in the baseline and fail now."""
        return [change for change in self.cases if change.regressed]

    @property
    def fixes(self) -> list[CaseChange]:
        """The cases that failed in the baseline and pass now."""
        return [change for change in self.cases if change.fixed]


def _change(before: ReportCase, after: ReportCase) -> CaseChange:
    def assertion(case: ReportCase, name: str) -> bool | None:
        result = case.assertions.get(name)
        return None if result is None else result.value is True

    def score(case: ReportCase, name: str) -> float | None:
        result = case.scores.get(name)
        return None if result is None else float(result.value)

    assertion_names = list(dict.fromkeys([*before.assertions, *after.assertions]))
    score_names = list(dict.fromkeys([*before.scores, *after.scores]))
    metric_names = list(dict.fromkeys([*before.metrics, *after.metrics]))
    return CaseChange(
        name=after.name,
        passed=(before.passed, after.passed),
        assertions={n: (assertion(before, n), assertion(after, n)) for n in assertion_names},
        scores={n: (score(before, n), score(after, n)) for n in score_names},
        metrics={n: (before.metrics.get(n), after.metrics.get(n)) for n in metric_names},
        cost=(before.cost, after.cost),
        duration=(before.duration, after.duration),
    )


def compare_cases(
    cases: Sequence[ReportCase],
    baseline: Sequence[ReportCase],
    analyses: Mapping[str, EvaluationResult] | None = None,
    earlier_analyses: Mapping[str, EvaluationResult] | None = None,
) -> ReportComparison:
    """Compare a run's `cases` and `analyses` with a baseline run's, matching them by name."""
    now, before = analyses or {}, earlier_analyses or {}
    names = list(dict.fromkeys([*before, *now]))
    earlier = {case.name: case for case in baseline}
    seen = {case.name for case in cases}
    return ReportComparison(
        cases=[_change(earlier[case.name], case) for case in cases if case.name in earlier],
        added=[case.name for case in cases if case.name not in earlier],
        removed=[case.name for case in baseline if case.name not in seen],
        analyses={
            name: (
                None if name not in before else before[name].value,
                None if name not in now else now[name].value,
            )
            for name in names
        },
    )
