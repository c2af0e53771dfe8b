"""Tool sources: tools a turn asks for each time it runs, not once when it is made.

A `ToolRegistry` holds tools fixed when it is built. Some tools are not: an
MCP server adds and removes tools while it runs (and says so), a tenant's
tools depend on who calls, a feature flag turns a family of tools on. A
tool source (`ToolSource`: anything with `async def tools_for(context)`,
such as an `MCPClient`, or a function made one with `@tool_source`) is put
among a turn's tools (`NeuronTurn(tools=[lookup, client])`,
`ToolRegistry.add_source`) and asked for its tools at the start of every
run, with the run's context (deps, session, input), as pydantic-ai's
dynamic toolsets and the OpenAI Agents SDK's MCP servers are listed per
run. The tools it gives join the registry for that run only: they pass the
registry's middleware, name checks, strictness and stop-tool checks as any
other tool does, and a name taken twice fails the run naming both.

Why per run, not per model call, by default: a run's tools stay what the
model was first shown; a run after a change sees the change. A source whose
tools a run's own tool calls turn on or off (a `login` tool that opens the
account tools) says `per_step = True` (`@tool_source(per_step=True)`) and is
asked again before every model call of the run, as pydantic-ai's dynamic
toolsets are by default (`per_run_step`): the calls of a model answer run
against the tools that model call was shown, so a tool cannot vanish between
the model asking for it and the turn running it.

A source that can say its tools changed carries a `ToolChanges`
(`neuron_tool._tool_changes`), which a served registry listens to, to tell
its MCP clients to list again.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Protocol, TypeAlias, overload, runtime_checkable

from ._tool_changes import ToolChanges, tool_changes_of
from .context import RunContext
from .tool import ToolDyn

__all__ = [
    "FunctionToolSource",
    "ToolChanges",
    "ToolSource",
    "ToolSourceFunction",
    "is_tool_source",
    "tool_changes_of",
    "tool_source",
]

ToolSourceFunction: TypeAlias = Callable[
    [RunContext[Any]], Sequence[ToolDyn] | Awaitable[Sequence[ToolDyn]]
]
"""`def tools(ctx) -> list[ToolDyn]` (or `async def`): the tools for the run `ctx` describes."""


@runtime_checkable
class ToolSource(Protocol):
    """Gives the tools of one run: asked once, at the run's start, with its context.

    A source with `per_step = True` is asked before every model call of the run
    instead, with the context at that step; its tools come after the run's others.
    """

    async def tools_for(self, context: RunContext[Any]) -> Sequence[ToolDyn]:
        """The tools this run may call (an empty sequence: none this time)."""
        ...


def is_tool_source(value: object) -> bool:
    """Whether `value` is a tool source (has a callable `tools_for`) rather than a tool."""
    return callable(getattr(value, "tools_for", None))


class FunctionToolSource:
    """A function of the run context giving tools, as a `ToolSource` (made by `@tool_source`)."""

    __slots__ = ("function", "name", "per_step")

    def __init__(
        self, function: ToolSourceFunction, *, name: str | None = None, per_step: bool = False
    ) -> None:
        if not isinstance(per_step, bool):
            raise TypeError(f"per_step must be True or False; got {per_step!r}")
        self.function: Final = function
        self.name: Final[str] = name or str(getattr(function, "__name__", repr(function)))
        """How errors name the source."""
        self.per_step: Final = per_step
        """Whether it is asked before every model call of a run, not once a run."""

    def __repr__(self) -> str:
        step = ", per_step=True" if self.per_step else ""
        return f"FunctionToolSource({self.name!r}{step})"

    async def tools_for(self, context: RunContext[Any]) -> Sequence[ToolDyn]:
        """Call the function with `context`; the tools it gave (the registry checks them)."""
        given = self.function(context)
        if inspect.isawaitable(given):
            return await given
        return given


@overload
def tool_source(function: ToolSourceFunction, /) -> FunctionToolSource: ...
@overload
def tool_source(
    *, per_step: bool = False
) -> Callable[[ToolSourceFunction], FunctionToolSource]: ...
def tool_source(
    function: ToolSourceFunction | None = None, /, *, per_step: bool = False
) -> FunctionToolSource | Callable[[ToolSourceFunction], FunctionToolSource]:
    """Make a function of the run context, giving that run's tools, a tool source.

    As pydantic-ai's `@agent.toolset`: `@tool_source def admin_tools(ctx): return
    [ban, unban] if ctx.deps.is_admin else []`. `@tool_source(per_step=True)`
    asks it before every model call of the run instead (pydantic-ai's
    `per_run_step`), with the context at that step (`ctx.step`, `ctx.usage`),
    for tools that a run's own tool calls turn on or off.
    """
    if function is None:
        return lambda given: FunctionToolSource(given, per_step=per_step)
    return FunctionToolSource(function, per_step=per_step)
