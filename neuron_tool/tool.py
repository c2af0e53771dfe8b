"""`ToolDyn`, the shape every tool has, and `FunctionTool`, a tool backed by a Python function."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, Final, Protocol, cast, runtime_checkable

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    PydanticUserError,
    TypeAdapter,
    ValidationError,
)
from pydantic.alias_generators import to_camel
from pydantic_core import to_jsonable_python

from ._arguments import Arguments, type_hints
from ._docstring import parse_docstring
from ._json_path import json_path
from .errors import ToolInputError, ToolRegistrationError
from .isolation import check_isolated
from .schema import json_schema_of


class ToolAnnotations(BaseModel):
    """MCP's hints about a tool's behaviour; hints only, never a security boundary.

    Field names are snake_case in Python and camelCase (`readOnlyHint`) on the
    MCP wire: dump with `by_alias=True` for the wire form.
    """

    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        defer_build=True,
    )

    # Field descriptions, not attribute docstrings: `use_attribute_docstrings` makes pydantic
    # search the loaded modules for the class's source, ~20 ms of `import neuron_turn`.
    title: str | None = Field(None, description="A human-readable title for the tool.")
    read_only_hint: bool | None = Field(
        None, description="True if the tool does not modify its environment."
    )
    destructive_hint: bool | None = Field(
        None,
        description=(
            "True if the tool may perform destructive updates (meaningful when not read-only)."
        ),
    )
    idempotent_hint: bool | None = Field(
        None,
        description=(
            "True if calling the tool again with the same input has no additional effect."
        ),
    )
    open_world_hint: bool | None = Field(
        None, description="True if the tool interacts with an open world of external entities."
    )


@runtime_checkable
class ToolDyn(Protocol):
    """Anything the registry can call: a name, a description, JSON Schemas and `call`.

    Implement it by shape: a plugin, an MCP bridge or a test double needs no
    base class from this package.
    """

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        ...

    @property
    def description(self) -> str:
        """What the tool does, for the model."""
        ...

    @property
    def input_schema(self) -> dict[str, JsonValue]:
        """The JSON Schema (an object schema) the input must match."""
        ...

    @property
    def output_schema(self) -> dict[str, JsonValue] | None:
        """The JSON Schema of the result, if known."""
        ...

    @property
    def annotations(self) -> ToolAnnotations | None:
        """MCP behaviour hints, if any."""
        ...

    async def call(self, input: JsonValue) -> JsonValue:
        """Run the tool on `input` and return its JSON result."""
        ...


class FunctionTool:
    """A `ToolDyn` backed by a typed Python function, sync or async; usually made by `@tool`.

    The input schema, the argument validation and the parameter descriptions all
    come from the function's signature and Google-style docstring, computed once
    here. Sync functions run in a worker thread so they never block the loop.
    """

    __slots__ = (
        "_arguments",
        "_is_async",
        "annotations",
        "description",
        "function",
        "input_schema",
        "name",
        "output_schema",
        "requires_isolation",
    )

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        requires_isolation: bool = False,
    ) -> None:
        """Describe `function` as a tool; raise `ToolRegistrationError` if it cannot be.

        With `requires_isolation`, the tool runs only in a process an environment's
        sandbox marked isolated (`neuron_tool.isolation`), and refuses elsewhere.
        """
        self.function: Final = function
        self.name: Final[str] = name if name is not None else _function_name(function)
        docstring = parse_docstring(inspect.getdoc(function))
        self.description: Final[str] = (
            description if description is not None else docstring.description
        )
        self.annotations: Final = annotations
        self._arguments: Final = Arguments(function, tool=self.name, descriptions=docstring.params)
        self._is_async: Final = _is_async(function)
        self.input_schema: Final[dict[str, JsonValue]] = self._arguments.schema
        self.output_schema: Final = _output_schema(function, tool=self.name)
        self.requires_isolation: Final = requires_isolation

    def __repr__(self) -> str:
        return f"FunctionTool(name={self.name!r})"

    async def call(self, input: JsonValue) -> JsonValue:
        """Validate `input` with pydantic, run the function and JSON-encode what it returns.

        Raises:
            ToolInputError: `input` does not fit the signature (names the field).
            ToolIsolationError: the tool requires isolation and this process is not isolated.
        """
        if self.requires_isolation:
            check_isolated(self.name)
        args, kwargs = self._bind(input)
        if self._is_async:
            result = await self.function(*args, **kwargs)
        else:
            result = await asyncio.to_thread(self.function, *args, **kwargs)
        # to_jsonable_python covers models, dataclasses, Decimal, datetime, UUID, Path, enums.
        return cast(JsonValue, to_jsonable_python(result))

    def _bind(self, input: JsonValue) -> tuple[list[Any], dict[str, Any]]:
        if not isinstance(input, dict):
            message = f"expected an object of arguments, got {type(input).__name__}"
            raise ToolInputError(self.name, "$", message)
        try:
            return self._arguments.bind(input)
        except ValidationError as exc:
            raise _input_error(self.name, exc) from exc


def _function_name(function: Callable[..., Any]) -> str:
    name = getattr(function, "__name__", None)
    if not isinstance(name, str) or name == "<lambda>":
        raise ToolRegistrationError(repr(function), "it has no usable __name__; pass name=")
    return name


def _is_async(function: Callable[..., Any]) -> bool:
    # A callable object with `async def __call__` is async too, though
    # iscoroutinefunction only sees that through its `__call__`.
    dunder_call = type(function).__call__
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(dunder_call)


def _output_schema(function: Callable[..., Any], *, tool: str) -> dict[str, JsonValue] | None:
    returns = type_hints(function, tool=tool).get("return", Any)
    if returns is Any or returns is None or returns is type(None):
        return None
    try:
        return json_schema_of(TypeAdapter(returns), mode="serialization")
    except PydanticUserError as exc:
        raise ToolRegistrationError(tool, f"return type has no JSON Schema: {exc.message}") from exc


def _input_error(tool: str, exc: ValidationError) -> ToolInputError:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return ToolInputError(tool, json_path(first["loc"]), first["msg"] + more)
