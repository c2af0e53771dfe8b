"""`Evaluator`: the base of every check, what it returns, and `@evaluator` for functions."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeAlias, overload

from ._specified import Specified
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


class Evaluator(Specified, ABC):
    """The base of evaluators: `async evaluate(ctx)` judges one case's answer.

    A subclass is usually a frozen dataclass whose fields are its arguments;
    then it can be named in a dataset file as `ClassName`, `{ClassName: arg}`
    or `{ClassName: {field: value, ...}}`. A field `evaluation_name` renames
    its result in the report (default: the class name).
    """

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
