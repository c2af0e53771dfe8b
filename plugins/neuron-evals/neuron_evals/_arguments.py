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

    `checked` is False for a class whose arguments cannot be read (no dataclass,
    and an `__init__` with untyped, `*args` or `**kwargs` parameters): they are
    left to its constructor.
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
        return _init_shape(kind, name)
    try:
        hints = typing.get_type_hints(kind)
    except (NameError, TypeError) as exc:
        raise EvaluatorSpecError(f"{name}: cannot resolve its fields' types: {exc}") from exc
    fields = [item for item in dataclasses.fields(shape) if item.init]
    parameters = [
        (
            item.name,
            hints[item.name],
            item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING,
        )
        for item in fields
    ]
    return _shape(kind, name, parameters)


def _init_shape(kind: type[Evaluator] | type[ReportEvaluator], name: str) -> Shape:
    """The shape of a class that is no dataclass, from its `__init__`'s typed parameters.

    One whose parameters cannot be read so (untyped, `*args`, `**kwargs`,
    positional-only) is left unchecked: its constructor judges what a file gives.
    """
    unchecked = Shape(name, _summary(kind), (), None, checked=False)
    init = kind.__init__
    if init is object.__init__:
        return _shape(kind, name, [])  # it takes no arguments
    try:
        signature = inspect.signature(init)
        hints = typing.get_type_hints(init)
    except (ValueError, TypeError, NameError):
        return unchecked
    parameters = list(signature.parameters.values())[1:]  # after `self`
    readable = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    if any(p.kind not in readable or p.name not in hints for p in parameters):
        return unchecked
    return _shape(
        kind,
        name,
        [(p.name, hints[p.name], p.default is inspect.Parameter.empty) for p in parameters],
    )


def _shape(
    kind: type[Evaluator] | type[ReportEvaluator],
    name: str,
    parameters: list[tuple[str, Any, bool]],
) -> Shape:
    """The shape of `kind` taking `parameters` (name, type, required), in order.

    Raises:
        EvaluatorSpecError: a required parameter's type has no JSON form.
    """
    arguments: list[Argument] = []
    for parameter, hint, required in parameters:
        if _has_json_schema(hint):
            arguments.append(Argument(parameter, hint, required))
        elif required:
            raise EvaluatorSpecError(
                f"{name}.{parameter} is of type {hint!r}, which has no JSON form; "
                f"{name} cannot go in a dataset file"
            )
    first = parameters[0][0] if parameters else None
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
            first = exc.errors()[0]
            one = exc.error_count() == 1
            wrong = first["msg"] if one else f"Input should be one of {_type_text(argument.hint)}"
            # Within a structured argument (a span query), say where.
            inside = _location(first["loc"]) if one else ""
            at = f" at {inside}" if inside else ""
            raise ValueError(f"{shape.name} argument {key!r}{at}: {wrong}, got {value!r}") from exc


def _location(loc: tuple[int | str, ...]) -> str:
    """A validation error's location as a path: `some_child_has.or_[1]`."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _type_text(hint: Any) -> str:
    """`hint` as written: `Decimal | str | int | float`."""
    return " | ".join(
        getattr(part, "__name__", str(part)) for part in typing.get_args(hint)
    ) or str(hint)
