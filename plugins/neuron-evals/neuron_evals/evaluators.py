"""The built-in evaluators: equality, containment, type, exit reason, cost, time, tools, spans.

Each is a frozen dataclass, named in a dataset file by its class name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from moneyed import Money
from pydantic import JsonValue, TypeAdapter, ValidationError

from layer0 import usd

from ._json import to_json_value
from ._span_match import checked_query
from .context import EvaluatorContext
from .evaluator import EvaluationReason, Evaluator, EvaluatorOutput
from .span_query import SpanQuery

__all__ = [
    "Contains",
    "Equals",
    "EqualsExpected",
    "ExitReasonIs",
    "HasMatchingSpan",
    "IsInstance",
    "MaxCost",
    "MaxDuration",
    "ToolCalled",
    "ValidatesAs",
]

_SHOWN = 60


def _shown(value: object) -> str:
    """`value`'s repr, cut to a readable length for a reason."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _same(output: object, expected: object) -> bool:
    """Equal as Python values, or as JSON (a typed answer against a file's mapping)."""
    if output == expected:
        return True
    try:
        return to_json_value(output) == to_json_value(expected)
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class EqualsExpected(Evaluator):
    """The answer equals the case's `expected_output`; no result when the case has none."""

    evaluation_name: str | None = None

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Compare `ctx.output` with `ctx.expected_output` (as JSON too)."""
        if ctx.expected_output is None:
            return {}
        if _same(ctx.output, ctx.expected_output):
            return True
        return EvaluationReason(
            False, f"expected {_shown(ctx.expected_output)}, got {_shown(ctx.output)}"
        )


@dataclass(frozen=True)
class Equals(Evaluator):
    """The answer equals `value` (as Python values, or as JSON)."""

    value: Any
    evaluation_name: str | None = None

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Compare `ctx.output` with `value`."""
        if _same(ctx.output, self.value):
            return True
        return EvaluationReason(False, f"expected {_shown(self.value)}, got {_shown(ctx.output)}")


@dataclass(frozen=True)
class Contains(Evaluator):
    """The answer contains `value`.

    A string is looked for in the answer's text (in the answer itself when it
    is a string); a mapping's keys and values must all be in the answer (as
    JSON); anything else is looked for with `in`.
    """

    value: Any
    case_sensitive: bool = True
    evaluation_name: str | None = None

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Look for `value` in the answer."""
        if isinstance(self.value, str):
            return self._in_text(ctx.output if isinstance(ctx.output, str) else ctx.output_text)
        if isinstance(self.value, Mapping):
            return self._in_mapping(to_json_value(ctx.output))
        try:
            found = self.value in ctx.output  # type: ignore[operator]  # a TypeError is a reason
        except TypeError as exc:
            return EvaluationReason(False, f"cannot look in {type(ctx.output).__name__}: {exc}")
        return True if found else EvaluationReason(False, f"{_shown(self.value)} not found")

    def _in_text(self, text: str) -> EvaluatorOutput:
        needle = self.value if self.case_sensitive else self.value.casefold()
        haystack = text if self.case_sensitive else text.casefold()
        if needle in haystack:
            return True
        return EvaluationReason(False, f"{_shown(text)} does not contain {_shown(self.value)}")

    def _in_mapping(self, output: JsonValue) -> EvaluatorOutput:
        if not isinstance(output, dict):
            return EvaluationReason(False, f"the answer is not a mapping: {_shown(output)}")
        for key, value in to_json_value(self.value).items():  # type: ignore[union-attr]
            if key not in output:
                return EvaluationReason(False, f"the answer has no key {key!r}")
            if output[key] != value:
                return EvaluationReason(
                    False, f"{key!r} is {_shown(output[key])}, not {_shown(value)}"
                )
        return True


@dataclass(frozen=True)
class IsInstance(Evaluator):
    """The answer is an instance of a type named `type_name` (a class or a base of it)."""

    type_name: str
    evaluation_name: str | None = None

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Look for `type_name` among the names of the answer's type and its bases."""
        kind = type(ctx.output)
        if any(self.type_name in (cls.__name__, cls.__qualname__) for cls in kind.__mro__):
            return True
        return EvaluationReason(False, f"the answer is of type {kind.__qualname__}")


@dataclass(frozen=True)
class ValidatesAs(Evaluator):
    """The answer validates as `output_type` with pydantic (a string is read as JSON).

    For a task whose answer is text that should hold a structure. It holds a
    Python type, so it has no form in a dataset file.
    """

    output_type: Any
    evaluation_name: str | None = None

    def spec_name(self) -> str:
        """`ValidatesAs`."""
        return "ValidatesAs"

    def spec_arguments(self) -> dict[str, JsonValue]:
        """Raise: a Python type has no form in a dataset file."""
        from .errors import EvaluatorSpecError

        raise EvaluatorSpecError("ValidatesAs holds a Python type; it cannot go in a dataset file")

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Validate the answer (its JSON text when it is a string)."""
        adapter: TypeAdapter[Any] = TypeAdapter(self.output_type)
        try:
            if isinstance(ctx.output, str):
                adapter.validate_json(ctx.output)
            else:
                adapter.validate_python(to_json_value(ctx.output))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the answer"
            return EvaluationReason(False, f"{where}: {first['msg']}")
        return True


@dataclass(frozen=True)
class ExitReasonIs(Evaluator):
    """The turn ended for `reason` (`complete`, `budget_exhausted`, `custom:<name>`...)."""

    reason: str = "complete"
    evaluation_name: str | None = None

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Compare the turn's exit reason with `reason`."""
        actual = ctx.exit_reason
        if actual is None:
            return EvaluationReason(False, "the task returned no TurnOutput")
        return True if actual == self.reason else EvaluationReason(False, f"it ended {actual}")


@dataclass(frozen=True)
class MaxCost(Evaluator):
    """The turn cost at most `usd` dollars (a decimal string, or a number read as its text)."""

    usd: Decimal | str | int | float
    evaluation_name: str | None = None

    def __post_init__(self) -> None:
        """Check the limit now, so a bad one fails when the dataset is made or read.

        Raises:
            ValueError: it is no decimal number of dollars, not finite, or negative.
        """
        try:
            amount = self.limit.amount
        except (ArithmeticError, ValueError, TypeError):  # decimal.InvalidOperation
            amount = None
        if amount is None or not amount.is_finite() or amount < 0:
            raise ValueError(
                f"MaxCost usd must be a dollar amount such as '0.05'; got {self.usd!r}"
            )

    @property
    def limit(self) -> Money:
        """The limit as USD Money."""
        amount = self.usd if isinstance(self.usd, Decimal | int) else Decimal(str(self.usd))
        return usd(amount)

    def spec_arguments(self) -> dict[str, JsonValue]:
        """The limit as a decimal string, never a float."""
        arguments = super().spec_arguments()
        arguments["usd"] = str(self.limit.amount)
        return arguments

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Compare the turn's cost with the limit."""
        cost = ctx.cost
        if cost is None:
            return EvaluationReason(False, "the task returned no TurnOutput")
        if cost <= self.limit:
            return True
        return EvaluationReason(False, f"it cost ${cost.amount}, over ${self.limit.amount}")


@dataclass(frozen=True)
class MaxDuration(Evaluator):
    """The task took at most `seconds` (wall clock, measured by the run)."""

    seconds: float
    evaluation_name: str | None = None

    def __post_init__(self) -> None:
        """Check the limit now, so a bad one fails when the dataset is made or read.

        Raises:
            ValueError: it is no number of seconds, not finite, or negative.
        """
        seconds = self.seconds
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not math.isfinite(seconds)
            or seconds < 0
        ):
            raise ValueError(f"MaxDuration seconds must be a number of seconds; got {seconds!r}")

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Compare the task's duration with the limit."""
        if ctx.duration <= self.seconds:
            return True
        return EvaluationReason(False, f"it took {ctx.duration:.3f}s, over {self.seconds}s")


@dataclass(frozen=True)
class ToolCalled(Evaluator):
    """The turn called the tool `name` (from `metadata.tools_called`)."""

    name: str
    evaluation_name: str | None = field(default=None)

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Look for `name` among the tools the turn called."""
        called = ctx.tools_called
        if self.name in called:
            return True
        return EvaluationReason(
            False, f"{self.name!r} was not called (called: {', '.join(called) or 'none'})"
        )


@dataclass(frozen=True)
class HasMatchingSpan(Evaluator):
    """Some span the task made during the case matches `query` (pydantic-evals' `HasMatchingSpan`).

    The spans are those neuron-tracing-otel records (`invoke_agent`, `chat`,
    `execute_tool` and any made under them), so it needs that plugin
    instrumenting while the dataset runs; without it the evaluator fails
    with `SpanTreeRecordingError` saying so, never a silent False.

    Raises:
        SpanQueryError: `query` is no valid `SpanQuery` (checked when made).
    """

    query: SpanQuery
    evaluation_name: str | None = None

    def __post_init__(self) -> None:
        """Check the query now, so a bad one fails when the dataset is made or read.

        It is kept as checked: a file's `max_duration: PT2S` as a `timedelta`.
        """
        object.__setattr__(self, "query", checked_query(self.query))

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Look for a span matching the query among the case's spans."""
        tree = ctx.span_tree
        if tree.any(self.query):
            return True
        reason = f"no span of {len(tree)} matched"
        if tree.dropped:
            reason += f" ({tree.dropped} more were not kept)"
        return EvaluationReason(False, reason)
