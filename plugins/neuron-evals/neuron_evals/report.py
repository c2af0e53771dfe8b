"""`EvaluationReport`: what one run of a dataset found, case by case, with its totals."""

from __future__ import annotations

import json
from collections.abc import Iterable
from statistics import fmean
from typing import TYPE_CHECKING

from moneyed import Money
from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool

from layer0 import Cost, TurnInput, usd

if TYPE_CHECKING:
    from .compare import ReportComparison

__all__ = [
    "EvaluationReport",
    "EvaluationResult",
    "EvaluatorFailure",
    "ReportCase",
    "ReportSummary",
    "TaskError",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EvaluationResult(_Model):
    """One result of one evaluator: an assertion (bool), a score (number) or a label (str)."""

    name: str
    """The result's name (the evaluator's, or the key it returned it under)."""
    value: StrictBool | int | float | str
    reason: str | None = None
    """Why, when the evaluator said."""
    source: str
    """The evaluator that gave it (its name in a dataset file)."""


class EvaluatorFailure(_Model):
    """An evaluator raised for a case: it counts as a failed assertion of that case."""

    name: str
    """The result name the evaluator would have given."""
    source: str
    """The evaluator (its name in a dataset file)."""
    error_type: str
    """The exception's class name."""
    message: str
    """The exception's message."""


class TaskError(_Model):
    """The task raised for a case: no answer, no evaluators run."""

    error_type: str
    """The exception's class name."""
    message: str
    """The exception's message."""


class ReportCase(_Model):
    """One case's run: the answer, its facts from the `TurnOutput`, and the evaluators' results."""

    name: str
    inputs: str | TurnInput
    expected_output: JsonValue = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    output: JsonValue = None
    """The answer as JSON (a typed answer dumped), None when the task raised."""
    output_text: str = ""
    """The answer's text."""
    exit_reason: str | None = None
    """Why the turn ended (`complete`, `budget_exhausted`...); None without a `TurnOutput`."""
    cost: Cost | None = None
    """What the task spent, in USD; None without a `TurnOutput`."""
    tokens_in: int | None = None
    tokens_out: int | None = None
    turns_used: int | None = None
    tools_called: list[str] = Field(default_factory=list)
    """The tools the turn called, in order."""
    duration: float
    """Seconds the task ran (wall clock)."""
    assertions: dict[str, EvaluationResult] = Field(default_factory=dict)
    scores: dict[str, EvaluationResult] = Field(default_factory=dict)
    labels: dict[str, EvaluationResult] = Field(default_factory=dict)
    evaluator_failures: list[EvaluatorFailure] = Field(default_factory=list)
    evaluator_cost: Cost = Field(default_factory=usd)
    """What evaluators (a judge) spent on this case, apart from `cost`."""
    task_error: TaskError | None = None

    @property
    def assertions_passed(self) -> int:
        """How many assertions hold."""
        return sum(1 for result in self.assertions.values() if result.value is True)

    @property
    def assertions_total(self) -> int:
        """How many assertions there are, counting each evaluator that raised as one failed."""
        return len(self.assertions) + len(self.evaluator_failures)

    @property
    def passed(self) -> bool:
        """The task answered, no evaluator raised and every assertion holds."""
        return self.task_error is None and self.assertions_passed == self.assertions_total


class ReportSummary(_Model):
    """The totals and averages of a report."""

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


class EvaluationReport(_Model):
    """The results of `Dataset.evaluate`: one `ReportCase` per case, in the dataset's order."""

    name: str
    """The run's name (the task's, unless given)."""
    cases: list[ReportCase]
    duration: float = 0.0
    """Seconds the whole run took (wall clock; less than the sum when cases ran together)."""

    @property
    def failures(self) -> list[ReportCase]:
        """The cases whose task raised."""
        return [case for case in self.cases if case.task_error is not None]

    def case(self, name: str) -> ReportCase:
        """Return the case named `name`.

        Raises:
            LookupError: no case has that name.
        """
        for case in self.cases:
            if case.name == name:
                return case
        raise LookupError(f"no case named {name!r} in report {self.name!r}")

    def summary(self) -> ReportSummary:
        """Return the totals and averages."""
        cases = self.cases
        passed = sum(1 for case in cases if case.passed)
        asserted = sum(case.assertions_passed for case in cases)
        total = sum(case.assertions_total for case in cases)
        scores: dict[str, list[float]] = {}
        for case in cases:
            for name, result in case.scores.items():
                scores.setdefault(name, []).append(float(result.value))
        durations = [case.duration for case in cases]
        return ReportSummary(
            cases=len(cases),
            passed=passed,
            pass_rate=passed / len(cases) if cases else 0.0,
            errors=len(self.failures),
            assertions_passed=asserted,
            assertions_total=total,
            assertion_pass_rate=asserted / total if total else 1.0,
            mean_scores={name: fmean(values) for name, values in scores.items()},
            total_cost=_sum(case.cost for case in cases if case.cost is not None),
            evaluator_cost=_sum(case.evaluator_cost for case in cases),
            tokens_in=sum(case.tokens_in or 0 for case in cases),
            tokens_out=sum(case.tokens_out or 0 for case in cases),
            total_duration=sum(durations),
            mean_duration=fmean(durations) if durations else 0.0,
        )

    def compare(self, baseline: EvaluationReport) -> ReportComparison:
        """Compare with `baseline` (an earlier run), case by case by name."""
        from .compare import compare_reports

        return compare_reports(self, baseline)

    def render(self, *, baseline: EvaluationReport | None = None, width: int = 40) -> str:
        """Return the report as a plain-text table, then the failures and the totals.

        With `baseline`, each cell shows the change from it (`pass -> FAIL`,
        `0.50 -> 0.80 (+0.30)`). Long text is cut to `width` characters with an
        ellipsis.
        """
        from ._render import render_report

        return render_report(self, baseline=baseline, width=width)

    def to_json(self, *, indent: int | None = 2) -> str:
        """Return the report as JSON, `summary()` under `"summary"`; costs are decimal strings."""
        data = self.model_dump(mode="json")
        data["summary"] = self.summary().model_dump(mode="json")
        return json.dumps(data, indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> EvaluationReport:
        """Read a report `to_json` wrote (its summary is computed again, not read).

        Raises:
            pydantic.ValidationError: the text is not such a report.
        """
        data = json.loads(text)
        if isinstance(data, dict):
            data.pop("summary", None)
        return cls.model_validate(data)

    def __str__(self) -> str:
        return self.render()


def _sum(costs: Iterable[Money]) -> Money:
    total = usd()
    for cost in costs:
        total = total + cost
    return total
