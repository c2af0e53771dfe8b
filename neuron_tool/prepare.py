"""A tool's `prepare`: whether, and as what, it is offered in a run, decided from the run.

Some tools are for some runs only: an admin tool for an admin's deps, a
refund tool once the order is known, a costly search until the turn has spent
its share. A tool with a `prepare` (`@tool(prepare=...)`, or any tool with a
callable `prepare` attribute) is asked before every model call of the turn, as
pydantic-ai's `prepare` is at every step, with the run's context at that step
(`RunContext`: deps, session, input, `step` — the model calls made so far —
and `usage` so far) and the schema it would be offered with: it returns that
schema, a changed one (a description naming the user's plan, a narrower input
schema), or None to leave the tool out of that call, as the OpenAI Agents
SDK's `is_enabled` does. A tool left out is not only unoffered: a call to it
in that call's answer is refused as a call to a tool the turn does not allow,
so a model cannot reach it by guessing its name; the next call's `prepare`
may offer it again. What the tool accepts is still checked against its own
input schema.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from .context import RunContext
from .errors import ToolPrepareError
from .schema import ToolSchema

__all__ = ["ToolPrepare", "prepare_of", "prepared_schema"]

ToolPrepare: TypeAlias = Callable[
    [RunContext[Any], ToolSchema], ToolSchema | Awaitable[ToolSchema | None] | None
]
"""`def prepare(ctx, schema) -> ToolSchema | None` (or `async def`): the schema to offer, or
None to leave the tool out of the model call about to be made."""


def prepare_of(tool: object) -> ToolPrepare | None:
    """The tool's `prepare`, if it has a callable one."""
    prepare = getattr(tool, "prepare", None)
    return prepare if callable(prepare) else None


async def prepared_schema(
    prepare: ToolPrepare, context: RunContext[Any], schema: ToolSchema
) -> ToolSchema | None:
    """What `prepare` makes of `schema` in `context`: the schema to offer, or None.

    Raises:
        ToolPrepareError: it raised, returned what is not a `ToolSchema` or None, or
            renamed the tool (calls name the tool it was registered as).
    """
    name = schema.name
    try:
        result = prepare(context, schema)
        if inspect.isawaitable(result):
            result = await result
    except Exception as exc:
        raise ToolPrepareError(name, f"raised {type(exc).__name__}: {exc}") from exc
    if result is None:
        return None
    if not isinstance(result, ToolSchema):
        raise ToolPrepareError(name, f"returned {type(result).__name__}, not a ToolSchema or None")
    if result.name != name:
        raise ToolPrepareError(
            name, f"renamed the tool to {result.name!r}; it is called by its registered name"
        )
    return result
