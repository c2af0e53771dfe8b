"""Output functions: the model answers by calling a function, whose result is the turn's answer.

As pydantic-ai's output functions: `output_type=run_query` (or one of a
choice, `[run_query, Refund]`, `[run_query, str]`) asks the model for the
function's arguments, its signature the schema, its docstring the
description, as for a `@tool` (a first `RunContext` parameter is given by
the turn, not asked of the model). Once the model's arguments validate, the
turn runs the function, and what it returns is the turn's answer: its
return annotation is the output type, which the output message stores as
JSON and `output_value` reads back.

Why not a tool: a tool's result goes back to the model, which then answers
again; an output function's result ends the turn (a hand-off, a query run
on the model's behalf, a value built from what the model decided), with no
second model call to pay for.

The function may send the answer back as an output validator does, raising
`neuron_tool.ModelRetry` with a hint (the model reads it as the final-answer
call's error and answers again; it counts against `output_retries`). Any
other exception fails the turn: a layer0 `TurnError` as raised, anything
else as `OutputFunctionError` naming the function. Output validators then
run on what it returned. A sync function runs in a worker thread, so it
never blocks the event loop.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from pydantic import JsonValue, TypeAdapter
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from layer0 import NonRetryableError, TurnError
from neuron_tool import (
    BoundArguments,
    FunctionTool,
    ModelRetry,
    RunContext,
    ToolInputError,
    ToolRegistrationError,
)
from neuron_tool.schema import json_schema_of

T = TypeVar("T")

__all__ = [
    "OutputCall",
    "OutputFunction",
    "OutputFunctionError",
    "TextFunction",
    "TextOutput",
    "is_output_function",
]


class OutputFunctionError(NonRetryableError):
    """An output function raised (other than `ModelRetry` or a `TurnError`): the turn stops."""


def is_output_function(value: object) -> bool:
    """Whether `value` is a function or bound method to take as an output function.

    Classes and other callables are output types, as pydantic-ai tells them apart.
    """
    return inspect.isfunction(value) or inspect.ismethod(value)


class OutputFunction:
    """An output function compiled once: its arguments' schema and validation, its return type.

    Raises (on construction):
        ValueError: the function cannot be described to a model (`*args`, a parameter
            type without a JSON Schema), has no return annotation, or returns a type
            pydantic cannot store as JSON.
    """

    __slots__ = ("adapter", "description", "name", "returns", "schema", "tool")

    def __init__(self, function: Any) -> None:
        if getattr(function, "__name__", "<lambda>") == "<lambda>":
            raise ValueError(
                f"the output function {function!r} has no name to be asked for by (the kind "
                "and tool the model answers through): define it with def, not lambda"
            )
        try:
            self.tool: Final = FunctionTool(function)
        except ToolRegistrationError as exc:
            raise ValueError(f"output function {exc.tool!r}: {exc.reason}") from exc
        self.name: Final = self.tool.name
        """The function's name: the kind of the answer it gives."""
        self.description: Final[str | None] = self.tool.description or None
        """The function's docstring, for the model."""
        self.schema: Final = self.tool.input_schema
        """Its arguments' JSON Schema (an object), what the model is asked for."""
        self.returns: Final = _return_type(function, self.name)
        """The function's return annotation: the answer's type."""
        self.adapter: Final[TypeAdapter[Any]] = _adapter_of(self.returns, self.name)
        """Validates and dumps what the function returns."""

    def __repr__(self) -> str:
        return f"OutputFunction({self.name!r})"

    def answer(self, value: JsonValue, kind: str | None) -> OutputCall:
        """The model's answer as a call to make, once its arguments validate.

        Raises:
            ValueError: the arguments do not fit the signature, naming where.
        """
        try:
            bound = self.tool.arguments(value)
        except ToolInputError as exc:
            raise ValueError(f"at {exc.path}: {exc.message}") from exc
        return OutputCall(self, bound, kind)


class TextOutput(Generic[T]):
    """A plain text answer made into the turn's answer by a function, as pydantic-ai's.

    `output_type=TextOutput(split_words)`, or in a choice in place of `str`
    (`[Refund, TextOutput(parse_note)]`): the model answers in text, and the
    function's one parameter besides a first `RunContext` gets it; what it
    returns is the answer (of kind `text`), its return annotation the type
    read back. It may send the text back with `ModelRetry`, as an output
    function may. The function is checked when the output spec is made
    (`OutputTypeError`: it must take one `str` and annotate what it returns).
    """

    __slots__ = ("function",)

    def __init__(self, function: Callable[..., Awaitable[T]] | Callable[..., T]) -> None:
        self.function: Final = function

    def __repr__(self) -> str:
        return f"TextOutput({self.function!r})"


class TextFunction:
    """A `TextOutput`'s function compiled once: the parameter its text goes to, its return type.

    Raises (on construction):
        ValueError: the function takes other than one `str` (a first `RunContext`
            aside), or is no output function (see `OutputFunction`).
    """

    __slots__ = ("function", "parameter")

    def __init__(self, output: TextOutput[Any]) -> None:
        self.function: Final = OutputFunction(output.function)
        properties = self.function.schema.get("properties")
        names = list(properties) if isinstance(properties, dict) else []
        taken = properties.get(names[0]) if isinstance(properties, dict) and names else None
        if len(names) != 1 or not isinstance(taken, dict) or taken.get("type") != "string":
            raise ValueError(
                f"TextOutput's function {self.function.name!r} must take one str (the "
                "answer's text), besides a first RunContext"
            )
        self.parameter: Final = names[0]
        """The parameter the text is given to."""

    def answer(self, text: str, kind: str) -> OutputCall:
        """The call that makes `text` the answer, of kind `kind`.

        Raises:
            ValueError: the text is not what the parameter takes (a `Literal`, a pattern).
        """
        return self.function.answer({self.parameter: text}, kind)


@dataclass(frozen=True, slots=True)
class OutputCall:
    """An answer to an output function, its arguments valid, the function not yet run."""

    function: OutputFunction
    arguments: BoundArguments
    kind: str | None
    """The kind of a choice the answer is (the function's name), None when it is the only type."""

    def of_kind(self, kind: str) -> OutputCall:
        """This call, named the kind of a choice it answers as."""
        return OutputCall(self.function, self.arguments, kind)

    async def result(self, context: RunContext[Any]) -> Any:
        """Run the function; what it returned.

        Raises:
            ModelRetry: the function sends the answer back with a hint.
            TurnError: as the function raised it.
            OutputFunctionError: the function raised anything else.
        """
        try:
            return await self.function.tool.returned(self.arguments, context)
        except (ModelRetry, TurnError):
            raise
        except Exception as exc:
            raise OutputFunctionError(
                f"output function {self.function.name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc


def _return_type(function: Any, name: str) -> Any:
    """`function`'s return annotation, resolved."""
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except NameError as exc:
        message = f"output function {name!r}: cannot resolve a type annotation: {exc}"
        raise ValueError(message) from exc
    if "return" not in hints:
        raise ValueError(
            f"output function {name!r} has no return annotation: annotate what it returns, "
            "the answer's type, which the output stores as JSON and reads back"
        )
    return hints["return"]


def _adapter_of(returns: Any, name: str) -> TypeAdapter[Any]:
    """The adapter of an output function's return type, which pydantic must store as JSON."""
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(returns)
        json_schema_of(adapter, mode="serialization")
    except (PydanticSchemaGenerationError, PydanticUserError) as exc:
        raise ValueError(
            f"output function {name!r} returns {returns!r}, which pydantic cannot store as "
            f"JSON: {exc}"
        ) from exc
    return adapter
