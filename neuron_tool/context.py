"""`RunContext`: what a tool that asks for it sees of the run calling it.

A tool asks by annotation, as pydantic-ai's tools do: a `@tool` function
whose first parameter is annotated `RunContext[Deps]` gets the context there,
and that parameter is not part of the tool's input schema (the model never
sees or fills it). Tools that do not ask see no change: `ToolDyn.call(input)`
is all they get, and the loop builds no context for them.

The context holds the caller's dependencies (`deps`: a database handle, an
HTTP client, the user; typed by the annotation and checked when the tool is
called), the session, the turn's input, its deadline, how far the turn has
got (`step`, the model calls made so far, and `usage`, the tokens, cost and
tool calls used so far), a `progress` callback whose reports reach the
turn's progress observers and its event stream, and `charge`, which counts a
model call the tool made itself in the turn's tokens and cost.

A `ToolDyn` written by hand asks the same way by shape: a `takes_context`
attribute that is True and an `async def call_in_context(input, context)`
method (`neuron_tool.ContextTool`).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Final, Generic, TypeAlias

from moneyed import Money
from pydantic import JsonValue
from typing_extensions import TypeVar

from layer0 import SessionId, TurnInput

from .usage import RunUsage

__all__ = ["Charger", "ProgressReporter", "RunContext"]

DepsT = TypeVar("DepsT", default=None)

_NONE_USED: Final = RunUsage()
"""The usage of a context built by hand (a test, an MCP server): nothing used yet."""

ProgressReporter: TypeAlias = Callable[[str, float | None, JsonValue], Awaitable[None]]
"""Takes one progress report of a tool: its message, fraction done (or None) and data."""
Charger: TypeAlias = Callable[[Money | None, int, int], None]
"""Takes what a tool's own model call used: its cost (None: unknown), input and output tokens."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunContext(Generic[DepsT]):
    """The run a tool is called in: caller's dependencies, session, deadline, progress.

    Why: a tool often needs what only the caller has (a connection, the user)
    and what only the run knows (whose session, how long is left); passing
    them here keeps them out of the model's arguments.
    """

    deps: DepsT
    """What the caller passed as `deps` (to `NeuronTurn` or to `execute`)."""
    session: SessionId | None = None
    """The session the turn belongs to, if any."""
    input: TurnInput | None = None
    """The input the turn was started with."""
    deadline: float | None = None
    """When the turn's `max_duration` ends, on the `time.monotonic()` clock (None: no limit)."""
    tool_name: str | None = None
    """The tool being called (None outside a tool call, e.g. in dynamic instructions)."""
    tool_call_id: str | None = None
    """The model's id for this call."""
    reporter: ProgressReporter | None = None
    """Where `progress` reports go; None when nothing listens (reports are then dropped)."""
    loop: asyncio.AbstractEventLoop | None = None
    """The event loop `reporter` runs on, for `report` from a plain `def` tool's thread."""
    step: int = 0
    """The model calls the turn has made so far: 0 before the first (the first `prepare`),
    1 for a tool the first response called or the `prepare` before the second call. A
    context strategy's summary calls are not counted.

    It counts this run of the turn, as `TurnMetadata.turns_used` does: a turn resumed
    after an approval pause, or the continuation of a partial turn, starts again at 0
    (the resumed calls run at step 0). A call whose answer the turn sent back (an output
    retry) counts as any other."""
    usage: RunUsage = _NONE_USED
    """The tokens, cost and tool calls the turn has used so far (`RunUsage`), counted as
    `step` is; all zero in a context built by hand."""
    charger: Charger | None = None
    """Where `charge` counts; None in a context built by hand (nothing is counted)."""

    def remaining(self) -> float | None:
        """Return the seconds left before the turn's deadline (never below 0); None without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    async def progress(
        self, message: str, *, fraction: float | None = None, data: JsonValue = None
    ) -> None:
        """Report progress of the running tool to the turn's observers and event stream.

        Cheap when nothing listens: the report is dropped.

        Raises:
            TypeError: `message` is not a string.
            ValueError: `fraction` is not a number from 0 to 1.
        """
        _check_report(message, fraction)
        if self.reporter is not None:
            await self.reporter(message, fraction, data)

    def report(
        self, message: str, *, fraction: float | None = None, data: JsonValue = None
    ) -> None:
        """`progress` for a plain `def` tool, which runs in a worker thread.

        Returns once the report is delivered, so reports and the tool's result
        reach the stream in the order they happened. Cheap when nothing listens.

        Raises:
            TypeError: `message` is not a string.
            ValueError: `fraction` is not a number from 0 to 1.
            RuntimeError: called on the event loop's own thread (an `async def`
                tool awaits `progress` instead), or with a reporter but no `loop`.
        """
        _check_report(message, fraction)
        reporter = self.reporter
        if reporter is None:
            return
        loop = self.loop
        if loop is None:
            raise RuntimeError("this RunContext has a reporter but no loop to run it on")
        if _running_loop() is loop:
            # Waiting here for the loop to deliver the report would block that very loop.
            raise RuntimeError(
                "RunContext.report is for plain `def` tools; an `async def` tool uses "
                "`await context.progress(...)`"
            )

        async def deliver() -> None:
            await reporter(message, fraction, data)

        asyncio.run_coroutine_threadsafe(deliver(), loop).result()

    def charge(
        self, cost: Money | None = None, *, input_tokens: int = 0, output_tokens: int = 0
    ) -> None:
        """Count a model call the tool made itself in the turn's tokens and cost.

        Why: a tool that calls a model (a summariser, an agent of its own) spends
        from the turn's budget. Counted here, it is in the turn's output metadata
        and `usage`, and `max_cost` and the token limits stop the turn after the
        tool round as they do after its own calls (pydantic-ai's tools pass
        `ctx.usage` on for the same). `cost` None: its price is unknown, the
        tokens are counted. Safe from a plain `def` tool's thread.

        Raises:
            TypeError: `cost` is not `Money`, or a count is not an int.
            ValueError: a count or the cost is negative, or the cost is not in USD.
        """
        _check_charge(cost, input_tokens, output_tokens)
        if self.charger is not None:
            self.charger(cost, input_tokens, output_tokens)

    def for_call(self, tool_name: str, tool_call_id: str | None) -> RunContext[DepsT]:
        """Return this context for one call of `tool_name`."""
        return replace(self, tool_name=tool_name, tool_call_id=tool_call_id)


def _check_report(message: object, fraction: object) -> None:
    if not isinstance(message, str):
        raise TypeError(f"a progress message is a str; got {type(message).__name__}")
    if fraction is not None and not (
        isinstance(fraction, int | float) and math.isfinite(fraction) and 0 <= fraction <= 1
    ):
        raise ValueError(f"progress fraction must be from 0 to 1; got {fraction!r}")


def _check_charge(cost: object, input_tokens: object, output_tokens: object) -> None:
    for name, count in (("input_tokens", input_tokens), ("output_tokens", output_tokens)):
        if type(count) is not int:
            raise TypeError(f"{name} is an int; got {type(count).__name__}")
        if count < 0:
            raise ValueError(f"{name} must not be negative; got {count}")
    if cost is None:
        return
    if not isinstance(cost, Money):
        raise TypeError(f"cost is a moneyed.Money (layer0.usd); got {type(cost).__name__}")
    if cost.currency.code != "USD":
        raise ValueError(f"cost must be in USD, as the turn's; got {cost.currency.code}")
    amount = cost.amount
    if not isinstance(amount, Decimal) or not amount.is_finite() or amount < 0:
        raise ValueError(f"cost must be a finite amount, not negative; got {amount}")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
