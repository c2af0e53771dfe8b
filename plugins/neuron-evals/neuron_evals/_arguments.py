"""The arguments a dataset file can give an evaluator, and their check (private).

One description of them serves both the JSON Schema of files (`_schema`) and
`from_file` (`_spec.build`), so what one accepts the other does.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from dataclasses import dataclass
from typing import Any, Final

from pydantic import PydanticSchemaGenerationError, TypeAdapter, ValidationError
from pydantic.errors import PydanticInvalidForJsonSchema
from pydantic.json_schema import JsonSchemaMode
from pydantic_core import PydanticSerializationError, to_json

from .errors import EvaluatorSpecError
from .evaluator import Evaluator, FunctionEvaluator
from .report_evaluator import ReportEvaluator

__all__ = ["MODE", "Argument", "Shape", "check_arguments", "shape_of"]

MODE: Final[JsonSchemaMode] = "validation"
"""Schemas describe what a file may hold, so what is validated."""


@dataclass(frozen=True)
class Argument:
    """One argument a file can give an evaluator: its name, type and whether it is required."""

    name: str
    hint: Any  # a type, or a union or generic alias of them
    required: bool


@dataclass(frozen=True)
class Shape:
    """An evaluator as a file names it: its name, its arguments and its first parameter.

    `checked` is False for a class that is no dataclass: its arguments are
    unknown, so they are left to its constructor.
    """

    name: str
    description: str
    arguments: tuple[Argument, ...]
    first: str | None  # the parameter `{Name: value}` fills, when a file can give it
    checked: bool = True


def _has_json_schema(hint: Any) -> bool:
    try:
        TypeAdapter(hint).json_schema(mode=MODE)
    except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema):
        return False
    return True


def _summary(thing: object) -> str:
    doc = inspect.getdoc(thing) or ""
    return doc.split("\n\n")[0].replace("\n", " ")


def shape_of(kind: type[Evaluator] | type[ReportEvaluator] | FunctionEvaluator) -> Shape:
    """How a file names `kind`: a function takes no arguments, a dataclass its JSON fields.

    A field whose type has no JSON Schema (`LLMJudge`'s `provider`) is not
    one a file can give.

    Raises:
        EvaluatorSpecError: a field's type cannot be resolved, or a required
            one has no JSON Schema (a file could never give it).
    """
    if isinstance(kind, FunctionEvaluator):
        return Shape(kind.name, _summary(kind.function), (), None)
    name = kind.__name__
    shape: object = kind  # a subclass may or may not be a dataclass
    if not dataclasses.is_dataclass(shape):
        return Shape(name, _summary(kind), (), None, checked=False)
    try:
        hints = typing.get_type_hints(kind)
    except (NameError, TypeError) as exc:
        raise EvaluatorSpecError(f"{name}: cannot resolve its fields' types: {exc}") from exc
    fields = [item for item in dataclasses.fields(shape) if item.init]
    arguments: list[Argument] = []
    for item in fields:
        required = (
            item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
        )
        if _has_json_schema(hints[item.name]):
            arguments.append(Argument(item.name, hints[item.name], required))
        elif required:
            raise EvaluatorSpecError(
                f"{name}.{item.name} is of type {hints[item.name]!r}, which has no JSON form; "
                f"{name} cannot go in a dataset file"
            )
    first = fields[0].name if fields else None
    positional = (
        first is not None
        and any(argument.name == first for argument in arguments)
        and not any(argument.required for argument in arguments if argument.name != first)
    )
    return Shape(name, _summary(kind), tuple(arguments), first if positional else None)


def check_arguments(shape: Shape, arguments: object) -> None:
    """Check what a file gives the evaluator `shape`: `{Name: arguments}`'s value.

    Missing arguments are left to the constructor, which names them.

    Raises:
        TypeError: an argument the evaluator has not (or a file cannot give),
            or a single value for an evaluator that takes none.
        ValueError: an argument of the wrong type (named, with what is wrong).
    """
    if not shape.checked:
        return
    by_name = {argument.name: argument for argument in shape.arguments}
    if not isinstance(arguments, dict):
        if shape.first is None:
            raise TypeError(
                f"{shape.name} takes no single argument; "
                f"give its arguments by name: {{{shape.name}: {{argument: value}}}}"
            )
        arguments = {shape.first: arguments}
    for key, value in arguments.items():
        argument = by_name.get(key)
        if argument is None:
            known = ", ".join(by_name) or "none"
            raise TypeError(
                f"{shape.name} has no argument {key!r} a file can give; its arguments: {known}"
            )
        try:
            # As JSON, strictly: what the file's JSON Schema says (an array is a
            # tuple's value, a number is not a string).
            TypeAdapter(argument.hint).validate_json(to_json(value), strict=True)
        except PydanticSerializationError as exc:
            raise ValueError(
                f"{shape.name} argument {key!r}: a value with no JSON form, got {value!r}"
            ) from exc
        except ValidationError as exc:
            wrong = (
                exc.errors()[0]["msg"]
                if exc.error_count() == 1
                else f"Input should be one of {_type_text(argument.hint)}"
            )
            raise ValueError(f"{shape.name} argument {key!r}: {wrong}, got {value!r}") from exc


def _type_text(hint: Any) -> str:
    """`hint` as written: `Decimal | str | int | float`."""
    return " | ".join(
        getattr(part, "__name__", str(part)) for part in typing.get_args(hint)
    ) or str(hint)
