"""`ToolDyn`, the shape every tool has, and `FunctionTool`, a tool backed by a Python function."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol, cast, get_args, get_origin, runtime_checkable

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

from layer0 import CustomBlock, ImageBlock

from ._arguments import Arguments, type_hints
from ._docstring import parse_docstring
from ._json_path import json_path
from .context import RunContext
from .errors import ToolContextError, ToolInputError, ToolRegistrationError
from .files import DOCUMENT_TYPE, ToolReturn
from .isolation import check_isolated
from .prepare import ToolPrepare
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

    async def call(self, input: JsonValue) -> JsonValue | ToolReturn:
        """Run the tool on `input` and return its JSON result (with files: a `ToolReturn`)."""
        ...


@runtime_checkable
class ContextTool(ToolDyn, Protocol):
    """A `ToolDyn` that asks for the run context (`neuron_tool.RunContext`).

    The registry calls `call_in_context` instead of `call` when
    `takes_context` is True, and builds no context for any other tool.
    """

    @property
    def takes_context(self) -> bool:
        """Whether the tool wants a `RunContext` (only True counts)."""
        ...

    async def call_in_context(
        self, input: JsonValue, context: RunContext[Any]
    ) -> JsonValue | ToolReturn:
        """Run the tool on `input` within `context` and return its JSON result."""
        ...


def takes_context(tool: object) -> bool:
    """Return whether `tool` asks for a run context (`takes_context` and `call_in_context`)."""
    return getattr(tool, "takes_context", False) is True and callable(
        getattr(tool, "call_in_context", None)
    )


@dataclass(frozen=True, slots=True)
class _ContextParameter:
    """The parameter of a function tool that receives the `RunContext`."""

    name: str
    positional: bool
    deps: type | None
    """The class the deps must be an instance of (None: not checkable, e.g. a Protocol)."""
    wanted: str


@dataclass(frozen=True, slots=True)
class BoundArguments:
    """A function tool's validated arguments (`FunctionTool.arguments`), without the run context."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class FunctionTool:
    """A `ToolDyn` backed by a typed Python function, sync or async; usually made by `@tool`.

    The input schema, the argument validation and the parameter descriptions all
    come from the function's signature and Google-style docstring, computed once
    here. Sync functions run in a worker thread so they never block the loop.
    A first parameter annotated `RunContext[Deps]` receives the run context and
    is left out of the input schema (see `neuron_tool.context`).
    """

    __slots__ = (
        "_arguments",
        "_context",
        "_is_async",
        "annotations",
        "description",
        "function",
        "input_schema",
        "name",
        "output_schema",
        "prepare",
        "requires_isolation",
        "sequential",
        "strict",
        "takes_context",
    )

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        requires_isolation: bool = False,
        prepare: ToolPrepare | None = None,
        strict: bool | None = None,
        sequential: bool = False,
    ) -> None:
        """Describe `function` as a tool; raise `ToolRegistrationError` if it cannot be.

        With `requires_isolation`, the tool runs only in a process an environment's
        sandbox marked isolated (`neuron_tool.isolation`), and refuses elsewhere.
        `prepare` decides before each model call whether and as what it is offered
        (`neuron_tool.prepare`). `strict=True` asks the provider to constrain the
        model's input to the schema as it decodes it (`neuron_tool.strict`).
        `sequential=True` runs it alone: a model answer that calls it has all its
        calls run one after another, in the model's order.
        """
        self.function: Final = function
        self.name: Final[str] = name if name is not None else _function_name(function)
        docstring = parse_docstring(inspect.getdoc(function))
        self.description: Final[str] = (
            description if description is not None else docstring.description
        )
        self.annotations: Final = annotations
        self._context: Final = _context_parameter(function, tool=self.name)
        self.takes_context: Final = self._context is not None
        """Whether the function's first parameter asks for the `RunContext`."""
        self._arguments: Final = Arguments(
            function,
            tool=self.name,
            descriptions=docstring.params,
            skip=0 if self._context is None else 1,
        )
        self._is_async: Final = _is_async(function)
        self.input_schema: Final[dict[str, JsonValue]] = self._arguments.schema
        self.output_schema: Final = _output_schema(function, tool=self.name)
        self.requires_isolation: Final = requires_isolation
        self.prepare: Final = prepare
        self.strict: Final = strict
        """Whether the provider constrains the model's input to the schema (None: not asked)."""
        self.sequential: Final = sequential
        """Whether a model answer calling it has its calls run one after another."""

    def __repr__(self) -> str:
        return f"FunctionTool(name={self.name!r})"

    async def call(self, input: JsonValue) -> JsonValue | ToolReturn:
        """Validate `input` with pydantic, run the function and JSON-encode what it returns.

        A `ToolReturn` comes back as it is (its value is JSON already); an image or
        document block returned alone comes back as a `ToolReturn` of that one file.

        A function asking for a `RunContext` gets one without deps or session.

        Raises:
            ToolInputError: `input` does not fit the signature (names the field).
            ToolIsolationError: the tool requires isolation and this process is not isolated.
            ToolContextError: the function asks for deps of a type (it gets None here).
        """
        if self._context is not None:
            return await self.call_in_context(input, RunContext(deps=None))
        if self.requires_isolation:
            check_isolated(self.name)
        args, kwargs = self._bind(input)
        return _jsonable(await self._started(args, kwargs))

    async def call_in_context(
        self, input: JsonValue, context: RunContext[Any]
    ) -> JsonValue | ToolReturn:
        """Like `call`, giving `context` to a function that asks for it (others ignore it).

        Raises:
            ToolInputError: `input` does not fit the signature (names the field).
            ToolIsolationError: the tool requires isolation and this process is not isolated.
            ToolContextError: `context.deps` is not of the type the annotation asks for.
        """
        if self._context is None:
            return await self.call(input)
        self._check(context)
        args, kwargs = self._bind(input)
        return _jsonable(await self._started(*self._placed(args, kwargs, context)))

    def arguments(self, input: JsonValue) -> BoundArguments:
        """Validate `input` into the function's arguments, without running it.

        Why: a caller that must refuse bad input before anything runs (an output
        function's answer, checked while the model can still correct it) binds
        first and runs later with `returned`.

        Raises:
            ToolInputError: `input` does not fit the signature (names the field).
        """
        args, kwargs = self._bind(input)
        return BoundArguments(tuple(args), kwargs)

    async def returned(self, bound: BoundArguments, context: RunContext[Any]) -> Any:
        """Run the function on `bound` arguments (giving `context` if it asks); its result as is.

        Why: what an output function returns is the turn's answer itself, not the
        JSON a tool's result is made into.

        Raises:
            ToolIsolationError: the tool requires isolation and this process is not isolated.
            ToolContextError: `context.deps` is not of the type the annotation asks for.
        """
        self._check(context)
        args, kwargs = list(bound.args), dict(bound.kwargs)
        if self._context is not None:
            args, kwargs = self._placed(args, kwargs, context)
        return await self._started(args, kwargs)

    def _check(self, context: RunContext[Any]) -> None:
        """Refuse to run outside a required isolation, or with deps not of the type asked for."""
        if self.requires_isolation:
            check_isolated(self.name)
        parameter = self._context
        if (
            parameter is not None
            and parameter.deps is not None
            and not isinstance(context.deps, parameter.deps)
        ):
            raise ToolContextError(self.name, parameter.wanted, context.deps)

    def _placed(
        self, args: list[Any], kwargs: dict[str, Any], context: RunContext[Any]
    ) -> tuple[list[Any], dict[str, Any]]:
        """`args` and `kwargs` with `context` where the function asks for it."""
        parameter = self._context
        assert parameter is not None
        if parameter.positional:
            args.insert(0, context)
        else:
            kwargs[parameter.name] = context
        return args, kwargs

    def _started(self, args: list[Any], kwargs: dict[str, Any]) -> Awaitable[Any]:
        # An awaitable, not a coroutine of our own: one frame less on every call.
        if self._is_async:
            # A string: `Awaitable[Any]` itself would build a generic alias on every call.
            return cast("Awaitable[Any]", self.function(*args, **kwargs))
        return asyncio.to_thread(self.function, *args, **kwargs)

    def _bind(self, input: JsonValue) -> tuple[list[Any], dict[str, Any]]:
        if not isinstance(input, dict):
            message = f"expected an object of arguments, got {type(input).__name__}"
            raise ToolInputError(self.name, "$", message)
        try:
            return self._arguments.bind(input)
        except ValidationError as exc:
            raise _input_error(self.name, exc) from exc


def _jsonable(result: object) -> JsonValue | ToolReturn:
    # to_jsonable_python covers models, dataclasses, Decimal, datetime, UUID, Path, enums;
    # what it would return unchanged skips the call.
    if type(result) in _AS_IS:
        return cast(JsonValue, result)
    if type(result) is ToolReturn:
        return result
    if type(result) is ImageBlock or (
        type(result) is CustomBlock and result.content_type == DOCUMENT_TYPE
    ):
        # A file returned alone is shown to the model, not sent as its base64 in JSON.
        return ToolReturn(files=[result])
    return cast(JsonValue, to_jsonable_python(result))


_AS_IS: Final = frozenset({str, int, bool, type(None)})
_FILE_RETURNS: Final = frozenset({ToolReturn, ImageBlock, CustomBlock})


def _context_parameter(function: Callable[..., Any], *, tool: str) -> _ContextParameter | None:
    """Return the parameter asking for the `RunContext`, if any; it must come first."""
    parameters = list(inspect.signature(function).parameters.values())
    hints = type_hints(function, tool=tool)
    asking = [i for i, p in enumerate(parameters) if _is_run_context(hints.get(p.name))]
    if not asking:
        return None
    if asking != [0]:
        reason = "only its first parameter may be a RunContext (and only one)"
        raise ToolRegistrationError(tool, reason)
    first = parameters[0]
    if (
        first.kind is inspect.Parameter.VAR_POSITIONAL
        or first.kind is inspect.Parameter.VAR_KEYWORD
    ):
        raise ToolRegistrationError(tool, "a RunContext parameter cannot be *args or **kwargs")
    deps, wanted = _deps_type(hints[first.name])
    positional = first.kind is not inspect.Parameter.KEYWORD_ONLY
    return _ContextParameter(first.name, positional, deps, wanted)


def _is_run_context(hint: object) -> bool:
    return hint is RunContext or get_origin(hint) is RunContext


def _deps_type(hint: object) -> tuple[type | None, str]:
    """The class deps are checked against, and how to name it in errors."""
    args = get_args(hint)
    if not args or args[0] is Any:
        return None, "Any" if args else "None"
    wanted = args[0]
    if wanted is None or wanted is type(None):
        return None, "None"
    origin = get_origin(wanted) or wanted
    name = getattr(wanted, "__name__", None) or repr(wanted)
    if not isinstance(origin, type) or getattr(origin, "_is_protocol", False):
        # A union, a Protocol without runtime checks...: the type checker's business.
        return None, name
    return origin, name


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
    if returns is Any or returns is None or returns is type(None) or returns in _FILE_RETURNS:
        # What the model is shown is not the JSON of these: there is no schema to give.
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
