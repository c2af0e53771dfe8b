"""Tool views: a source's or a list's tools filtered, prefixed or renamed, the tools unchanged.

An MCP server offers forty tools and a turn should see three; two servers
both call a tool `search`; a plugin's `add` should reach the model as
`plus`. A view shapes the tools a source gives each run (or a fixed list of
tools, once) without touching them, as pydantic-ai's `FilteredToolset`,
`PrefixedToolset` and `RenamedToolset` and the OpenAI Agents SDK's MCP
`tool_filter` do:

- `filtered_tools(source, allow=..., block=..., where=...)` keeps the tools
  named in `allow`, drops those in `block`, and asks `where(context, tool)` per
  run for the rest (a person's plan, a tenant's grants);
- `prefixed_tools(tools, "gh_")` offers each under the prefix;
- `renamed_tools(tools, {"plus": "add"})` offers `add` as `plus` (new name
  first, as pydantic-ai's map reads);
- `each_step(source)` asks a source before every model call of a run, not
  once a run (`per_step`).

A view of a source is a source, asked each run; a view of a list is a list.
A tool left out is not in the run's registry, so a call to it is refused as
a call to an unknown tool: a model cannot reach it by guessing its name. A
renamed tool keeps everything else (its call, schema, strictness, run
context, `prepare`, sequential and external marks); the model, the
approval policy and the hooks see the new name, an MCP server still gets
the call under its own.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Final, TypeAlias, overload

from pydantic import JsonValue

from .context import RunContext
from .errors import ToolSourceError, ToolViewError
from .files import ToolReturn
from .registry import _source_name, _tools_of, is_tool_name
from .source import ToolSource, is_tool_source
from .tool import ToolAnnotations, ToolDyn

__all__ = [
    "ToolFilter",
    "ToolSourceView",
    "each_step",
    "filtered_tools",
    "prefixed_tools",
    "renamed_tools",
]

ToolFilter: TypeAlias = Callable[[RunContext[Any], ToolDyn], bool | Awaitable[bool]]
"""`def keep(ctx, tool) -> bool` (or `async def`): whether this run offers `tool`."""

_Shape: TypeAlias = Callable[[RunContext[Any], Sequence[ToolDyn]], Awaitable[list[ToolDyn]]]


class ToolSourceView:
    """A tool source whose tools, each run, are shaped before the registry sees them.

    Made by `filtered_tools`, `prefixed_tools`, `renamed_tools` and `each_step`;
    errors name it by its source's name, so a failing MCP server is still named.
    """

    __slots__ = ("_description", "_per_step", "_shape", "name", "source")

    def __init__(
        self,
        source: ToolSource,
        shape: _Shape,
        description: str,
        *,
        per_step: bool | None = None,
    ) -> None:
        self.source: Final = source
        self.name: Final[str] = _source_name(source)
        """How errors name the view: as its source."""
        self._shape: Final = shape
        self._description: Final = description
        self._per_step: Final = per_step

    def __repr__(self) -> str:
        return self._description

    @property
    def per_step(self) -> bool:
        """Whether it is asked before every model call: as its source is, unless `each_step`."""
        if self._per_step is not None:
            return self._per_step
        return getattr(self.source, "per_step", False) is True

    async def tools_for(self, context: RunContext[Any]) -> Sequence[ToolDyn]:
        """The source's tools for the run `context` describes, shaped."""
        return await self._shape(context, await _tools_of(self.source, context))


def filtered_tools(
    source: ToolSource,
    *,
    allow: Collection[str] | None = None,
    block: Collection[str] = (),
    where: ToolFilter | None = None,
) -> ToolSourceView:
    """The tools of `source` a run may call: in `allow`, not in `block`, kept by `where`.

    `allow` None allows any name; `where(context, tool)` is asked once per tool per
    run, and one that raises or gives anything but True or False fails the run
    (`ToolSourceError`, naming the source and the tool). Names are the source's
    own (before any prefix a view outside this one adds); `block` wins over
    `allow`. A name in `allow` the source does not give this run is no error: an
    MCP server may add it later.

    Raises:
        ToolViewError: `source` is not a tool source, or `allow` or `block` is a
            string (a collection of names is meant) or holds what is not a name.
    """
    description = f"filtered_tools({source!r})"
    _check_source(description, source)
    allowed = None if allow is None else _names(description, "allow", allow)
    blocked = _names(description, "block", block)
    name = _source_name(source)

    async def shape(context: RunContext[Any], tools: Sequence[ToolDyn]) -> list[ToolDyn]:
        named = [
            t for t in tools if (allowed is None or t.name in allowed) and t.name not in blocked
        ]
        if where is None:
            return named
        return [t for t in named if await _kept(where, context, t, name)]

    return ToolSourceView(source, shape, description)


def each_step(source: ToolSource) -> ToolSourceView:
    """`source` asked before every model call of a run, not once a run (`per_step`).

    Why: a source of its own (an `MCPClient`, a plugin's) may change within a run
    because of the run's own calls: a server whose `enable_toolset` tool adds
    tools (GitHub's dynamic toolsets) offers them from the model's next call.

    Raises:
        ToolViewError: `source` is not a tool source.
    """
    description = f"each_step({source!r})"
    _check_source(description, source)
    return ToolSourceView(source, _each_run(list), description, per_step=True)


@overload
def prefixed_tools(tools: ToolSource, prefix: str) -> ToolSourceView: ...
@overload
def prefixed_tools(tools: Sequence[ToolDyn], prefix: str) -> list[ToolDyn]: ...
def prefixed_tools(
    tools: ToolSource | Sequence[ToolDyn], prefix: str
) -> ToolSourceView | list[ToolDyn]:
    """`tools` (a source or a list) each offered as `prefix` plus its name.

    Why: two servers or plugins that both name a tool `search` can serve one turn.

    Raises:
        ToolViewError: `prefix` is empty or holds a character no tool name may
            have, or a listed tool's prefixed name is longer than 64 characters
            (a source's is refused by the run it is given in, naming the source).
    """
    description = f"prefixed_tools({tools!r}, {prefix!r})"
    if not isinstance(prefix, str) or len(prefix) > 63 or not is_tool_name(prefix):
        reason = "the prefix must be 1-63 characters from A-Z, a-z, 0-9, '_' and '-'"
        raise ToolViewError(description, f"{reason}; got {prefix!r}")

    def rename(given: Sequence[ToolDyn]) -> list[ToolDyn]:
        return [_renamed(tool, prefix + tool.name) for tool in given]

    if is_tool_source(tools):
        return ToolSourceView(_source(tools), _each_run(rename), description)
    listed = rename(_listed(description, tools))
    _check_names(description, listed)
    return listed


@overload
def renamed_tools(tools: ToolSource, names: Mapping[str, str]) -> ToolSourceView: ...
@overload
def renamed_tools(tools: Sequence[ToolDyn], names: Mapping[str, str]) -> list[ToolDyn]: ...
def renamed_tools(
    tools: ToolSource | Sequence[ToolDyn], names: Mapping[str, str]
) -> ToolSourceView | list[ToolDyn]:
    """`tools` (a source or a list) with those named in `names` offered by new names.

    `names` maps each new name to the tool's own, as pydantic-ai's `renamed`
    does: `{"plus": "add"}` offers `add` as `plus`; the others keep their names.
    A source's tool the map names but the run is not given is no error (the
    source may give it another run); a list's is.

    Raises:
        ToolViewError: a new name is not a tool name, two new names rename one
            tool, or a tool the map names is not in the list.
    """
    description = f"renamed_tools({tools!r}, {dict(names)!r})"
    by_old = _renames(description, names)

    def rename(given: Sequence[ToolDyn]) -> list[ToolDyn]:
        return [_renamed(tool, by_old.get(tool.name, tool.name)) for tool in given]

    if is_tool_source(tools):
        return ToolSourceView(_source(tools), _each_run(rename), description)
    listed = _listed(description, tools)
    missing = sorted(set(by_old) - {tool.name for tool in listed})
    if missing:
        given = ", ".join(repr(tool.name) for tool in listed)
        raise ToolViewError(description, f"no tool {missing[0]!r} to rename among {given}")
    return rename(listed)


def _renamed(tool: ToolDyn, name: str) -> ToolDyn:
    """`tool` offered as `name`; a view of a view wraps the tool itself, not the view."""
    inner = tool._tool if isinstance(tool, _NamedTool) else tool
    return inner if inner.name == name else _NamedTool(inner, name)


class _NamedTool:
    """A tool under another name; all else (call, context, `prepare`, marks) is the tool's.

    Attributes a registry or a turn looks for by name (`strict`, `sequential`,
    `takes_context`, `call_in_context`, `prepare`, ...) are the tool's, read through.
    """

    __slots__ = ("_tool", "name")

    def __init__(self, tool: ToolDyn, name: str) -> None:
        self._tool: Final = tool
        self.name: Final = name

    def __repr__(self) -> str:
        return f"{self._tool!r} as {self.name!r}"

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") or attribute == "_tool":
            raise AttributeError(attribute)
        return getattr(self._tool, attribute)

    @property
    def description(self) -> str:
        """The tool's description."""
        return self._tool.description

    @property
    def input_schema(self) -> dict[str, JsonValue]:
        """The tool's input schema."""
        return self._tool.input_schema

    @property
    def output_schema(self) -> dict[str, JsonValue] | None:
        """The tool's output schema."""
        return self._tool.output_schema

    @property
    def annotations(self) -> ToolAnnotations | None:
        """The tool's MCP hints."""
        return self._tool.annotations

    async def call(self, input: JsonValue) -> JsonValue | ToolReturn:
        """Run the tool."""
        return await self._tool.call(input)


def _each_run(rename: Callable[[Sequence[ToolDyn]], list[ToolDyn]]) -> _Shape:
    async def shape(context: RunContext[Any], tools: Sequence[ToolDyn]) -> list[ToolDyn]:
        return rename(tools)

    return shape


async def _kept(where: ToolFilter, context: RunContext[Any], tool: ToolDyn, source: str) -> bool:
    try:
        kept: object = where(context, tool)  # checked: a filter is the caller's code
        if inspect.isawaitable(kept):
            kept = await kept
    except Exception as exc:
        reason = f"has a filter that raised {type(exc).__name__} on tool {tool.name!r}: {exc}"
        raise ToolSourceError(source, reason) from exc
    if not isinstance(kept, bool):
        reason = f"has a filter that gave {type(kept).__name__} for tool {tool.name!r}"
        raise ToolSourceError(source, f"{reason}, not True or False")
    return kept


def _check_source(description: str, source: object) -> None:
    if not is_tool_source(source):
        raise ToolViewError(description, "not a tool source (it needs `tools_for(context)`)")


def _source(tools: object) -> ToolSource:
    return tools  # type: ignore[return-value]  # is_tool_source checked its shape


def _listed(description: str, tools: object) -> list[ToolDyn]:
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise ToolViewError(description, "give a tool source or a list of tools")
    listed = list(tools)
    for tool in listed:
        if not isinstance(tool, ToolDyn):
            raise ToolViewError(description, f"{tool!r} is not a tool (see neuron_tool.ToolDyn)")
    return listed


def _check_names(description: str, tools: Sequence[ToolDyn]) -> None:
    for tool in tools:
        if not is_tool_name(tool.name):
            raise ToolViewError(description, f"{tool.name!r} is longer than 64 characters")


def _names(description: str, what: str, names: Collection[str]) -> frozenset[str]:
    if isinstance(names, str | bytes):
        raise ToolViewError(description, f"{what} takes a collection of names; got {names!r}")
    for name in names:
        if not isinstance(name, str):
            raise ToolViewError(description, f"{what} holds {name!r}, not a tool's name")
    return frozenset(names)


def _renames(description: str, names: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(names, Mapping):
        raise ToolViewError(description, "names maps each new name to a tool's own name")
    by_old: dict[str, str] = {}
    for new, old in names.items():
        if not is_tool_name(new):
            reason = "names must be 1-64 characters from A-Z, a-z, 0-9, '_' and '-'"
            raise ToolViewError(description, f"new name {new!r}: {reason}")
        if not isinstance(old, str):
            raise ToolViewError(description, f"{old!r} (renamed {new!r}) is not a tool's name")
        if old in by_old:
            reason = f"{by_old[old]!r} and {new!r} both rename {old!r}"
            raise ToolViewError(description, reason)
        by_old[old] = new
    return by_old
