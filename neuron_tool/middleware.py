"""Tool middleware in the axum `from_fn` style: `async def mw(call, next) -> result`.

A middleware receives the `ToolCall` and `next`, the rest of the chain. It may
change the call (`await next(call.with_input(...))`), answer without calling
`next` at all, or post-process what `next` returns.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import KW_ONLY, dataclass
from typing import Any, TypeAlias

from pydantic import JsonValue

from .context import RunContext
from .files import ToolReturn
from .tool import ToolDyn


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call of a tool as middleware sees it: its name, input, tool and run context."""

    name: str
    """The registered name of the tool being called."""
    input: JsonValue
    """The input the tool will receive (already validated by the registry, if asked)."""
    _: KW_ONLY
    tool: ToolDyn
    """The tool that will run at the end of the chain."""
    context: RunContext[Any] | None = None
    """The run context, when the tool asks for one (None for every other tool)."""

    def with_input(self, input: JsonValue) -> ToolCall:
        """Return a copy of this call with `input` replaced."""
        return ToolCall(self.name, input, tool=self.tool, context=self.context)


Next: TypeAlias = Callable[[ToolCall], Awaitable[JsonValue | ToolReturn]]
"""The rest of the middleware chain, ending in the tool itself."""

Middleware: TypeAlias = Callable[[ToolCall, Next], Awaitable[JsonValue | ToolReturn]]
"""`async def mw(call: ToolCall, next: Next) -> JsonValue | ToolReturn`."""


def compose(middleware: Iterable[Middleware], endpoint: Next) -> Next:
    """Chain `middleware` around `endpoint`; the first middleware runs outermost.

    The chain is built once (at registration), so a call pays one plain
    function call per layer and nothing else.
    """
    chain = endpoint
    for layer in reversed(tuple(middleware)):
        chain = _bind(layer, chain)
    return chain


def _bind(layer: Middleware, next: Next) -> Next:
    # A plain def handing back the middleware's awaitable avoids one coroutine frame per layer.
    def bound(call: ToolCall) -> Awaitable[JsonValue | ToolReturn]:
        return layer(call, next)

    return bound
