"""`ReportCase`: one case's run in a report, and the results, failures and errors it holds."""

from __future__ import annotations

from typing import Annotated, Final, TypeAlias

from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StrictBool,
    StrictFloat,
    StrictInt,
)

from layer0 import Cost, TurnInput, usd

__all__ = ["EvaluationResult", "EvaluatorFailure", "MetricValue", "ReportCase", "TaskError"]


def _float_sized(value: int) -> int:
    """`value` if a float holds it: means and comparisons read every number as a float."""
    if abs(value) >= _FLOAT_BOUND:
        digits = int(value.bit_length() * 0.30103)
        raise ValueError(f"an int of about {digits} digits is past what a float holds")
    return value


_FLOAT_BOUND: Final = 2**1024
"""The first int no float holds (the largest float is just under it)."""

MetricValue: TypeAlias = (
    Annotated[StrictInt, AfterValidator(_float_sized)] | Annotated[StrictFloat, AllowInfNan(False)]
)
"""A metric's sum as a report holds it: an int a float holds, or a finite float (never a bool)."""

_ResultValue: TypeAlias = (
    StrictBool
    | Annotated[int, AfterValidator(_float_sized)]
    | Annotated[float, AllowInfNan(False)]
    | str
)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EvaluationResult(_Model):
    """One result of one evaluator: an assertion (bool), a score (number) or a label (str)."""

    name: str
    """The result's name (the evaluator's, or the key it returned it under)."""
    value: _ResultValue
    """The assertion, score or label; a score is finite, as `summary()` averages it."""
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
    stacktrace: str | None = None
    """Its traceback as Python prints it (its end past 8,192 characters); None in old reports."""


class TaskError(_Model):
    """The task raised for a case: no answer, no evaluators run."""

    error_type: str
    """The exception's class name."""
    message: str
    """The exception's message."""
    stacktrace: str | None = None
    """Its traceback as Python prints it (its end past 8,192 characters); None in old reports."""


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
    attributes: dict[str, JsonValue] = Field(default_factory=dict)
    """What the task recorded with `set_eval_attribute`, by name (kept when it then raised)."""
    metrics: dict[str, MetricValue] = Field(default_factory=dict)
    """The sums the task recorded with `increment_eval_metric`, by name (kept when it raised).

    With its spans recorded, plus its model requests' `requests`, tokens and
    `cost` (USD, a float) summed from them, unless it raised (`EvaluatorContext.metrics`).
    """
    source_case: str | None = None
    """The dataset case this is a run of, when runs were repeated (`name` is then `case [i/n]`)."""
    run: int | None = None
    """Which run of `source_case` (1-based), when runs were repeated."""

    @property
    def case_name(self) -> str:
        """The dataset case's name: `source_case` for a repeated run, else `name`."""
        return self.source_case or self.name

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
