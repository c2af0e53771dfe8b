"""Evaluators by name, as a dataset file holds them (private).

A file names an evaluator as `Name` (no arguments), `{Name: value}` (its first
argument) or `{Name: {argument: value, ...}}`, as pydantic-evals' files do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, TypeVar

from pydantic import JsonValue

from ._arguments import check_arguments, shape_of
from ._specified import Specified
from .errors import UnknownEvaluatorError
from .evaluator import Evaluator, FunctionEvaluator
from .evaluators import (
    Contains,
    Equals,
    EqualsExpected,
    ExitReasonIs,
    HasMatchingSpan,
    IsInstance,
    MaxCost,
    MaxDuration,
    ToolCalled,
)
from .judge import LLMJudge
from .report_evaluator import ReportEvaluator
from .report_evaluators import Accuracy, PassRate, PrecisionRecall

CustomEvaluator = type[Evaluator] | FunctionEvaluator | type[ReportEvaluator]
"""What a caller registers: an evaluator class, a function made one with `@evaluator`,
or a report evaluator class."""

BUILT_IN: Final[tuple[type[Evaluator], ...]] = (
    Contains,
    Equals,
    EqualsExpected,
    ExitReasonIs,
    HasMatchingSpan,
    IsInstance,
    LLMJudge,
    MaxCost,
    MaxDuration,
    ToolCalled,
)

BUILT_IN_REPORT: Final[tuple[type[ReportEvaluator], ...]] = (Accuracy, PassRate, PrecisionRecall)

Factory = Callable[..., Evaluator]
ReportFactory = Callable[..., ReportEvaluator]
Built = TypeVar("Built", Evaluator, ReportEvaluator)
"""What a registry builds: evaluators of cases, or of reports."""


def _function_factory(function: FunctionEvaluator) -> Factory:
    def build(*args: object, **kwargs: object) -> Evaluator:
        if args or kwargs:
            raise TypeError(f"{function.name} is a function evaluator and takes no arguments")
        return function

    return build


def registry(custom: Sequence[CustomEvaluator] = ()) -> dict[str, Factory]:
    """The built-in evaluators and `custom` by name.

    Raises:
        ValueError: a custom evaluator has the name of a built-in or of another.
    """
    named: list[tuple[str, Factory]] = []
    for item in custom:
        if isinstance(item, FunctionEvaluator):
            named.append((item.name, _function_factory(item)))
        elif issubclass(item, Evaluator):
            named.append((item.__name__, item))
    return _registry(BUILT_IN, named)


def report_registry(custom: Sequence[CustomEvaluator] = ()) -> dict[str, ReportFactory]:
    """The built-in report evaluators and the report evaluator classes of `custom` by name.

    Raises:
        ValueError: a custom one has the name of a built-in or of another.
    """
    named: list[tuple[str, ReportFactory]] = [
        (item.__name__, item)
        for item in custom
        if isinstance(item, type) and issubclass(item, ReportEvaluator)
    ]
    return _registry(BUILT_IN_REPORT, named)


def _registry(
    built_in: Sequence[Callable[..., Built]], named: Sequence[tuple[str, Callable[..., Built]]]
) -> dict[str, Callable[..., Built]]:
    found: dict[str, Callable[..., Built]] = {getattr(cls, "__name__", ""): cls for cls in built_in}
    for name, factory in named:
        if name in found:
            raise ValueError(f"two evaluators are named {name!r}; give one another name")
        found[name] = factory
    return found


def build(spec: JsonValue, evaluators: Mapping[str, Callable[..., Built]]) -> Built:
    """The evaluator `spec` names.

    Raises:
        UnknownEvaluatorError: no evaluator has that name.
        TypeError, ValueError: the spec's shape or its arguments are wrong
            (an argument the evaluator has not, or of the wrong type).
        EvaluatorSpecError: the evaluator cannot go in a dataset file.
    """
    if isinstance(spec, str):
        name, arguments = spec, None
    elif isinstance(spec, dict) and len(spec) == 1:
        ((name, arguments),) = spec.items()
    else:
        raise ValueError("an evaluator is a name, or a mapping of one name to its arguments")
    factory = evaluators.get(name)
    if factory is None:
        raise UnknownEvaluatorError(name, sorted(evaluators))
    if isinstance(spec, str):
        return factory()
    # `{Name: null}` gives the first argument None (`{Equals: null}`), as any other value.
    if isinstance(factory, type):
        check_arguments(shape_of(factory), arguments)
    if isinstance(arguments, dict):
        return factory(**arguments)
    return factory(arguments)


def spec_of(evaluator: Specified) -> JsonValue:
    """How a dataset file names `evaluator`, in its shortest form.

    Raises:
        EvaluatorSpecError: it has no form in a file.
    """
    name = evaluator.spec_name()
    arguments = evaluator.spec_arguments()
    if not arguments:
        return name
    fields = getattr(evaluator, "__dataclass_fields__", {})
    first = next(iter(fields), None)
    if len(arguments) == 1 and first in arguments and not isinstance(arguments[first], dict):
        return {name: arguments[first]}
    return {name: arguments}
