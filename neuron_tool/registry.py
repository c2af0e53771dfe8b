"""`ToolRegistry`: the tools a turn may call, their schemas and the middleware around them."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeGuard, cast

from pydantic import JsonValue, ValidationError

from . import _compiled_schemas
from ._compiled_schemas import Compiled, schema_key
from .context import RunContext
from .errors import (
    ToolCallError,
    ToolError,
    ToolNotFoundError,
    ToolRegistrationError,
    ToolSourceError,
)
from .external import is_external
from .files import ToolReturn
from .middleware import Middleware, Next, ToolCall, compose
from .prepare import ToolPrepare, prepare_of, prepared_schema
from .retry import ModelRetry
from .schema import InputValidator, InvalidSchemaError, ToolSchema
from .source import ToolSource, is_tool_source
from .tool import ToolDyn, takes_context

# The name rule the major providers share; checked here so a bad name fails
# at registration rather than on the first request.
_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
# Errors that already speak the registry's language, and the signal for the model.
_PASS_THROUGH: Final = (ToolError, ModelRetry)
# The members `isinstance(tool, ToolDyn)` looks for, read once: Python 3.11's protocol
# check gathers them again on every call (~25 µs, as long as compiling a schema),
# and a tool source's tools are checked again on every step.
_TOOL_MEMBERS: Final = tuple(name for name in vars(ToolDyn) if not name.startswith("_"))


@dataclass(slots=True)
class _Entry:
    tool: ToolDyn
    schema: ToolSchema
    validator: InputValidator
    middleware: tuple[Middleware, ...]
    takes_context: bool
    """Whether the tool asks for a `RunContext` (see `neuron_tool.context`)."""
    chain: Next | None = None
    """The composed middleware chain, or None when no middleware applies."""
    prepare: ToolPrepare | None = None
    """What decides before each model call whether and as what the tool is offered."""


class ToolRegistry:
    """The tools available to a turn, kept in registration order.

    Everything costly (schema checks, validator compilation, middleware
    chains) happens at registration, so `call` stays cheap. A schema checked
    before (a source's tool given again, each step or each request) is not
    checked or compiled again: its validator is reused (`_compiled_schemas`).
    """

    def __init__(
        self,
        tools: Iterable[ToolDyn | ToolSource] = (),
        *,
        middleware: Iterable[Middleware] = (),
    ) -> None:
        """Create a registry of `tools` (sources among them), `middleware` around every call."""
        self._entries: dict[str, _Entry] = {}
        self.sources: tuple[ToolSource, ...] = ()
        """The tool sources asked for each run's tools (`neuron_tool.source`), in order."""
        self.step_sources: tuple[ToolSource, ...] = ()
        """On a run's registry (`for_run`): its sources asked again before each model call
        after the first (`per_step`), by `for_step`."""
        self._before_steps: ToolRegistry | None = None
        """On a run's registry with step sources: its tools but theirs, which `for_step` adds to."""
        self._middleware: tuple[Middleware, ...] = tuple(middleware)
        self.any_takes_context = False
        """Whether some registered tool asks for a `RunContext` (kept up to date)."""
        self.any_prepares = False
        """Whether some registered tool has a `prepare` (kept up to date)."""
        self.external_names: frozenset[str] = frozenset()
        """The names of the external tools (`neuron_tool.external`), kept up to date."""
        self.sequential_names: frozenset[str] = frozenset()
        """The names of the tools that run alone (`sequential`), kept up to date: a model
        answer calling one has all its calls run one after another."""
        for tool in tools:
            if is_tool_source(tool):
                self.add_source(cast(ToolSource, tool))
            else:
                self.register(cast(ToolDyn, tool))

    def add_source(self, source: ToolSource) -> None:
        """Add a tool source: each run asks it for tools that join this registry's for that run.

        Raises:
            ToolRegistrationError: `source` has no callable `tools_for`.
        """
        if not is_tool_source(source):
            raise ToolRegistrationError(repr(source), "a tool source needs `tools_for(context)`")
        self.sources = (*self.sources, source)

    async def for_run(self, context: RunContext[Any]) -> ToolRegistry:
        """This registry with its sources' tools for the run `context` describes.

        The sources are asked at once; the registry returned has no sources (its
        tools are the run's), and keeps those asked at every step (`per_step`) as
        its `step_sources`, their tools after the others'. Without sources, this
        registry itself.

        Raises:
            ToolSourceError: a source raised (its error named), or gave a tool that
                cannot be registered (a name taken, by the registry or another source).
        """
        if not self.sources:
            return self
        given = await _asked(self.sources, context)
        run = self.with_tools(())
        run.sources = ()
        stepped = tuple(source for source in self.sources if _per_step(source))
        if not stepped:
            return _given(run, given)
        run = _given(run, [(source, tools) for source, tools in given if not _per_step(source)])
        steps = _given(run.with_tools(()), [(s, tools) for s, tools in given if _per_step(s)])
        steps.step_sources, steps._before_steps = stepped, run
        return steps

    async def for_step(self, context: RunContext[Any]) -> ToolRegistry:
        """This run's registry with its step sources asked again, for the step `context` is at.

        The run's other tools (its own, its per-run sources') are kept as they
        were; only the `per_step` sources are asked, at once. Without step sources,
        this registry itself.

        Raises:
            ToolSourceError: as for `for_run`.
        """
        base = self._before_steps
        if base is None:
            return self
        steps = _given(base.with_tools(()), await _asked(self.step_sources, context))
        steps.step_sources, steps._before_steps = self.step_sources, base
        return steps

    def register(self, tool: ToolDyn, *, middleware: Iterable[Middleware] = ()) -> None:
        """Add `tool`, with `middleware` around its calls (inside the global middleware).

        Raises:
            ToolRegistrationError: The name is taken or invalid, or the input
                schema is not a valid draft 2020-12 JSON Schema.
        """
        name = _checked_name(tool)
        if name in self._entries:
            raise ToolRegistrationError(name, "a tool with this name is already registered")
        sequential = getattr(tool, "sequential", False)
        if not isinstance(sequential, bool):
            reason = f"sequential must be True or False; got {sequential!r}"
            raise ToolRegistrationError(name, reason)
        schema, validator = _compiled(name, tool)
        entry = _Entry(tool, schema, validator, tuple(middleware), takes_context(tool))
        entry.chain = self._chain(entry)
        entry.prepare = prepare_of(tool)
        self._entries[name] = entry
        self.any_takes_context = self.any_takes_context or entry.takes_context
        self.any_prepares = self.any_prepares or entry.prepare is not None
        if is_external(tool):
            self.external_names = self.external_names | {name}
        if sequential:
            self.sequential_names = self.sequential_names | {name}

    def with_tools(self, tools: Iterable[ToolDyn]) -> ToolRegistry:
        """Return a registry holding this one's tools (and middleware), then `tools`.

        Why: a turn offers tools its caller declares for one call only, beside
        its own, without changing the registry its other calls share. This
        registry's checks, validators and chains are reused, not rebuilt.

        Raises:
            ToolRegistrationError: a tool of `tools` is taken or invalid, as for `register`.
        """
        copy = ToolRegistry(middleware=self._middleware)
        copy._entries = dict(self._entries)
        copy.any_takes_context, copy.any_prepares = self.any_takes_context, self.any_prepares
        copy.external_names = self.external_names
        copy.sequential_names = self.sequential_names
        copy.sources = self.sources
        for tool in tools:
            copy.register(tool)
        return copy

    def unregister(self, name: str) -> None:
        """Remove the tool called `name`; raise `ToolNotFoundError` if there is none."""
        if self._entries.pop(name, None) is None:
            raise ToolNotFoundError(name, self._entries)
        self.any_takes_context = any(e.takes_context for e in self._entries.values())
        self.any_prepares = any(e.prepare is not None for e in self._entries.values())
        self.external_names = self.external_names - {name}
        self.sequential_names = self.sequential_names - {name}

    def use(self, middleware: Middleware) -> Middleware:
        """Add `middleware` around every tool, inside the global middleware added before it.

        Returns `middleware`, so `use` also works as a decorator.
        """
        self._middleware = (*self._middleware, middleware)
        for entry in self._entries.values():
            entry.chain = self._chain(entry)
        return middleware

    def get(self, name: str) -> ToolDyn:
        """Return the tool called `name`; raise `ToolNotFoundError` listing the available ones."""
        entry = self._entries.get(name)
        if entry is None:
            raise ToolNotFoundError(name, self._entries)
        return entry.tool

    def takes_context(self, name: str) -> bool:
        """Return whether the tool called `name` asks for a `RunContext` (False if unknown)."""
        entry = self._entries.get(name)
        return entry is not None and entry.takes_context

    def check_input(self, name: str, input: JsonValue) -> None:
        """Check `input` against the input schema of the tool called `name`, as `call` does.

        Why: an external tool's input is checked before its call is handed out.

        Raises:
            ToolNotFoundError: No tool is called `name`.
            ToolInputError: `input` does not match the schema; carries the JSON path.
        """
        entry = self._entries.get(name)
        if entry is None:
            raise ToolNotFoundError(name, self._entries)
        entry.validator.check(name, input)

    def names(self) -> list[str]:
        """Return the registered names in registration order."""
        return list(self._entries)

    def schemas(self, allowed: Collection[str] | None = None) -> list[ToolSchema]:
        """Return the schemas to send a provider, in registration order.

        Args:
            allowed: Names to include; names not registered are ignored.
                `None` includes every tool.
        """
        if allowed is None:
            return [entry.schema for entry in self._entries.values()]
        wanted = frozenset(allowed)
        return [entry.schema for name, entry in self._entries.items() if name in wanted]

    async def prepare(
        self, schemas: Sequence[ToolSchema], context: Callable[[str], RunContext[Any]]
    ) -> tuple[list[ToolSchema], frozenset[str]]:
        """`schemas` as each tool's `prepare` has them for one step, and the names it left out.

        The loop asks it before every model call; `context(name)` gives the run's
        context at that step for the tool `name`. Schemas of tools
        without a `prepare`, or not registered here, pass unchanged.

        Raises:
            ToolPrepareError: a `prepare` raised, returned what is not a schema, or
                renamed its tool.
        """
        prepared: list[ToolSchema] = []
        hidden: set[str] = set()
        for schema in schemas:
            entry = self._entries.get(schema.name)
            if entry is None or entry.prepare is None:
                prepared.append(schema)
                continue
            offered = await prepared_schema(entry.prepare, context(schema.name), schema)
            if offered is None:
                hidden.add(schema.name)
            else:
                prepared.append(offered)
        return prepared, frozenset(hidden)

    async def call(
        self,
        name: str,
        input: JsonValue,
        *,
        validate: bool = True,
        context: RunContext[Any] | None = None,
    ) -> JsonValue | ToolReturn:
        """Run the tool called `name` on `input` through its middleware chain.

        Only `ToolError`s and `ModelRetry` come out: anything else the tool or a
        middleware raises is wrapped in `ToolCallError`, with the original as
        `__cause__`.

        Args:
            name: The tool to call.
            input: Its input, as the model sent it.
            validate: Check `input` against the tool's input schema first.
            context: The run context, for a tool that asks for one (others never
                see it); such a tool called without one gets a context without deps.

        Raises:
            ToolNotFoundError: No tool is called `name`; the message lists those there are.
            ToolInputError: `input` does not match the schema; carries the JSON path.
            ToolCallError: The tool or a middleware raised.
            ModelRetry: The tool asked the model to retry; passed through untouched.
        """
        entry = self._entries.get(name)
        if entry is None:
            raise ToolNotFoundError(name, self._entries)
        if validate:
            entry.validator.check(name, input)
        chain = entry.chain
        # The two paths are inlined rather than factored into helpers: each
        # helper would add a coroutine frame to every call.
        if chain is None:
            try:
                if entry.takes_context:
                    return await _call_in_context(entry.tool, input, context)
                return await entry.tool.call(input)
            except _PASS_THROUGH:
                raise
            except Exception as exc:
                raise _tool_failed(name, exc) from exc
        try:
            return await chain(ToolCall(name, input, tool=entry.tool, context=context))
        except _PASS_THROUGH:
            raise
        except Exception as exc:
            raise ToolCallError(name, f"middleware raised {_describe(exc)}") from exc

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._entries

    def __iter__(self) -> Iterator[ToolDyn]:
        """Iterate over the tools in registration order (`names()` gives their names)."""
        return (entry.tool for entry in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"ToolRegistry({self.names()!r})"

    def _chain(self, entry: _Entry) -> Next | None:
        layers = self._middleware + entry.middleware
        return compose(layers, _call_tool) if layers else None


async def _asked(
    sources: Sequence[ToolSource], context: RunContext[Any]
) -> list[tuple[ToolSource, Sequence[ToolDyn]]]:
    """Each source with what it gave for `context`, asked at once.

    Each is waited for, so none is left running when another fails; the first
    failure by order is raised.
    """
    given = await asyncio.gather(
        *(_tools_of(source, context) for source in sources), return_exceptions=True
    )
    failed = next((r for r in given if isinstance(r, BaseException)), None)
    if failed is not None:
        raise failed
    return list(zip(sources, cast(list[Sequence[ToolDyn]], given), strict=True))


def _given(
    run: ToolRegistry, given: Iterable[tuple[ToolSource, Sequence[ToolDyn]]]
) -> ToolRegistry:
    """`run` with the tools each source gave registered, in order; returned for chaining."""
    for source, tools in given:
        for tool in tools:
            try:
                run.register(tool)
            except ToolRegistrationError as exc:
                reason = f"gave a tool it cannot offer: tool {exc.tool!r}: {exc.reason}"
                raise ToolSourceError(_source_name(source), reason) from exc
    return run


def _per_step(source: ToolSource) -> bool:
    """Whether `source` is asked before every model call, not once a run (`per_step`)."""
    return getattr(source, "per_step", False) is True


async def _tools_of(source: ToolSource, context: RunContext[Any]) -> Sequence[ToolDyn]:
    """What `source` gives for the run, any failure as a `ToolSourceError` naming it."""
    try:
        tools: object = await source.tools_for(context)  # checked: a source is the caller's code
    except ToolSourceError:
        raise
    except Exception as exc:
        reason = f"raised {type(exc).__name__}: {exc}"
        raise ToolSourceError(_source_name(source), reason) from exc
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise ToolSourceError(_source_name(source), f"gave {type(tools).__name__}, not tools")
    return cast(Sequence[ToolDyn], tools)


def _source_name(source: object) -> str:
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else repr(source)


async def _call_tool(call: ToolCall) -> JsonValue | ToolReturn:
    """The end of every middleware chain: run the tool, wrapping what it raises."""
    try:
        if takes_context(call.tool):
            return await _call_in_context(call.tool, call.input, call.context)
        return await call.tool.call(call.input)
    except _PASS_THROUGH:
        raise
    except Exception as exc:
        raise _tool_failed(call.name, exc) from exc


async def _call_in_context(
    tool: ToolDyn, input: JsonValue, context: RunContext[Any] | None
) -> JsonValue | ToolReturn:
    call_in_context = tool.call_in_context  # type: ignore[attr-defined]
    result: JsonValue | ToolReturn = await call_in_context(
        input, context if context is not None else RunContext(deps=None)
    )
    return result


def _tool_failed(name: str, exc: Exception) -> ToolCallError:
    return ToolCallError(name, _describe(exc))


def _describe(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def is_tool_name(name: object) -> bool:
    """Return whether `name` is a name a tool may have: 1-64 of A-Z, a-z, 0-9, `_` and `-`.

    Every model API takes these names, in a request's tools and in its history;
    no registered tool has another.
    """
    return isinstance(name, str) and _NAME.match(name) is not None


def _is_tool(value: object) -> TypeGuard[ToolDyn]:
    """`isinstance(value, ToolDyn)`, its usual yes found without the protocol check's cost."""
    members = all(hasattr(value, member) for member in _TOOL_MEMBERS)
    if members and getattr(value, "call", None) is not None:
        return True
    return isinstance(value, ToolDyn)  # a no is the protocol check's own


def _checked_name(tool: object) -> str:
    if not _is_tool(tool):
        raise ToolRegistrationError(repr(tool), "not a ToolDyn (see neuron_tool.ToolDyn)")
    name = tool.name
    if not isinstance(name, str) or not is_tool_name(name):
        reason = "names must be 1-64 characters from A-Z, a-z, 0-9, '_' and '-'"
        raise ToolRegistrationError(str(name), reason)
    return name


def _compiled(name: str, tool: ToolDyn) -> tuple[ToolSchema, InputValidator]:
    """`tool`'s schema and its compiled input validator, reused if its schema was seen before.

    Raises:
        ToolRegistrationError: `strict` is not a bool or None, the schema or the
            description is not JSON, or the input schema is not a valid JSON Schema.
    """
    strict = getattr(tool, "strict", None)
    if strict is not None and not isinstance(strict, bool):
        raise ToolRegistrationError(name, f"strict must be True, False or None; got {strict!r}")
    description, input_schema = tool.description, tool.input_schema
    key = schema_key(input_schema)
    known = None if key is None else _compiled_schemas.COMPILED.get(key, input_schema)
    if known is not None and type(name) is str and type(description) is str:
        # Checked and copied when first compiled: only the name and description are new.
        schema = ToolSchema.model_construct(
            name=name, description=description, input_schema=known.copy(), strict=strict
        )
        return schema, known.validator
    schema = _tool_schema(name, description, input_schema, strict)
    try:
        validator = InputValidator(schema.input_schema)
    except InvalidSchemaError as exc:
        raise ToolRegistrationError(name, f"invalid input schema: {exc}") from exc
    kept = None if key is None else Compiled.of(key, schema.input_schema, validator)
    if kept is None:
        return schema, validator
    _compiled_schemas.COMPILED.put(kept.text, kept)
    return schema.model_copy(update={"input_schema": kept.copy()}), validator


def _tool_schema(
    name: str, description: object, input_schema: object, strict: bool | None
) -> ToolSchema:
    # Validating into a ToolSchema copies the schema, so later edits to the
    # tool's dict cannot drift from the validator compiled from it.
    try:
        return ToolSchema(
            name=name,
            description=description,
            input_schema=input_schema,
            strict=strict,
        )
    except ValidationError as exc:
        raise ToolRegistrationError(name, f"schema or description is not JSON: {exc}") from exc
