"""`Evaluator`: the base of every check, what it returns, and `@evaluator` for functions."""

from __future__ import annotations

import dataclasses
import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeAlias, overload

from pydantic import JsonValue

from ._json import to_json_value
from .context import EvaluatorContext

__all__ = [
    "EvaluationReason",
    "EvaluationScalar",
    "Evaluator",
    "EvaluatorOutput",
    "FunctionEvaluator",
    "evaluator",
]

EvaluationScalar: TypeAlias = bool | int | float | str
"""A bool is an assertion, an int or float a score, a str a label."""


@dataclass(frozen=True)
class EvaluationReason:
    """A result with the reason for it, shown in the report."""

    value: EvaluationScalar
    reason: str | None = None


EvaluatorOutput: TypeAlias = (
    EvaluationScalar | EvaluationReason | Mapping[str, EvaluationScalar | EvaluationReason]
)
"""What `evaluate` returns: one result, or several by name (an empty mapping: none)."""


class Evaluator(ABC):
    """The base of evaluators: `async evaluate(ctx)` judges one case's answer.

    A subclass is usually a frozen dataclass whose fields are its arguments;
    then it can be named in a dataset file as `ClassName`, `{ClassName: arg}`
    or `{ClassName: {field: value, ...}}`. A field `evaluation_name` renames
    its result in the report (default: the class name).
    """

    def spec_name(self) -> str:
        """The name a dataset file calls it by (the class name)."""
        return type(self).__name__

    def result_name(self) -> str:
        """The name of its result in the report: `evaluation_name`, else `spec_name()`."""
        name = getattr(self, "evaluation_name", None)
        return name if isinstance(name, str) and name else self.spec_name()

    def spec_arguments(self) -> dict[str, JsonValue]:
        """Its arguments as a dataset file holds them: the fields not at their default.

        Raises:
            EvaluatorSpecError: an argument has no JSON form.
        """
        shape: object = self  # a subclass may or may not be a dataclass
        if not dataclasses.is_dataclass(shape):
            return {}
        arguments: dict[str, JsonValue] = {}
        for item in dataclasses.fields(shape):
            value = getattr(self, item.name)
            if item.default is not dataclasses.MISSING and value == item.default:
                continue
            arguments[item.name] = to_json_value(value)
        return arguments

    @abstractmethod
    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Judge the case in `ctx`: a bool (assertion), a number (score), a str (label)."""


EvaluatorFunction: TypeAlias = Callable[
    [EvaluatorContext], EvaluatorOutput | Awaitable[EvaluatorOutput]
]


class FunctionEvaluator(Evaluator):
    """A plain function as an evaluator (made by `@evaluator`); named after the function."""

    def __init__(self, function: EvaluatorFunction, *, name: str | None = None) -> None:
        """Wrap `function` (sync or async, taking the context)."""
        self.function = function
        own = getattr(function, "__name__", None)
        self.name: str = name or (own if isinstance(own, str) else "evaluator")
        self.__doc__ = function.__doc__

    def spec_name(self) -> str:
        """The function's name (or the one given)."""
        return self.name

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Call the function, awaiting it when it is async."""
        result = self.function(ctx)
        if inspect.isawaitable(result):
            return await result
        return result

    def __repr__(self) -> str:
        return f"FunctionEvaluator({self.name!r})"


@overload
def evaluator(function: EvaluatorFunction, /) -> FunctionEvaluator: ...
@overload
def evaluator(*, name: str | None = None) -> Callable[[EvaluatorFunction], FunctionEvaluator]: ...
def evaluator(
    function: EvaluatorFunction | None = None, /, *, name: str | None = None
) -> FunctionEvaluator | Callable[[EvaluatorFunction], FunctionEvaluator]:
    """Make a function of the context an evaluator: `@evaluator` or `@evaluator(name=...)`.

    The function may be sync or async and returns what `Evaluator.evaluate` does.
    """
    if function is not None:
        return FunctionEvaluator(function, name=name)

    def wrap(inner: EvaluatorFunction) -> FunctionEvaluator:
        return FunctionEvaluator(inner, name=name)

    return wrap
