"""An agent as a tool of another: the OpenAI Agents SDK's `agent.as_tool()`.

`researcher = NeuronTurn(model, tools=[calculator.as_tool("ask_calculator", "...")])`
gives the researcher's model a tool taking one `input`, the question or task for
the other agent, whose answer (its output type's value, as JSON, or its text) is
the call's result. Each call is a fresh conversation of the other agent (no
session), and its tokens and cost are charged to the calling turn
(`run(charge_to=ctx)`), so the caller's `max_cost` and token limits cover both.

A run that ends without an answer (a limit reached, a guardrail's stop, a call
waiting for approval, which no one could give from inside a tool) fails the call
with a `ToolCallError` naming why, which the calling model reads as the result:
an agent whose calls may wait for a person is delegated to through an
orchestrator instead (the `delegate` effect), where its pause can be resumed.

`stream_events=True` hands the other agent's events (its text as it grows, its
tool calls and results) to the calling turn's stream while the call runs, as the
Agents SDK's `as_tool(on_stream=...)`: each one a `ToolProgress` report of the
call, its `data` holding the event's JSON, which `nested_event` reads back. Off by
default: every text delta becomes a report, which observers and tracing see too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Final, Protocol

from pydantic import JsonValue

from layer0 import TurnOutput
from neuron_hooks import ToolProgress
from neuron_tool import FunctionTool, RunContext, RunUsage, ToolCallError, ToolRegistrationError
from neuron_tool.registry import is_tool_name

from ._exit_text import exit_reason_text
from .approval import AWAITING_APPROVAL
from .events import TurnDone, TurnEvent, event_from_json, event_json
from .run_result import RunResult

__all__ = ["AGENT_EVENT_KEY", "agent_tool", "nested_event"]

AGENT_EVENT_KEY: Final = "agent_event"
"""The key of a `ToolProgress` report's `data` holding an agent tool's own event, as JSON."""


class _Events(Protocol):
    """What `_Agent.stream` returns: `TurnStream`, as far as an agent tool reads it."""

    def __aiter__(self) -> AsyncIterator[TurnEvent]: ...
    async def aclose(self) -> None: ...
    @property
    def output(self) -> TurnOutput: ...
    @property
    def usage(self) -> RunUsage: ...


class _Agent(Protocol):
    """What an agent tool runs: a `NeuronTurn` (named so, not imported: turn imports this)."""

    async def run(
        self, message: str, *, deps: object = None, charge_to: RunContext[Any] | None = None
    ) -> RunResult[Any]: ...
    def stream(self, input: str, *, deps: object = None) -> _Events: ...
    def output_value(self, output: TurnOutput) -> Any: ...


def agent_tool(
    agent: _Agent,
    name: str,
    description: str,
    *,
    pass_deps: bool = False,
    stream_events: bool = False,
) -> FunctionTool:
    """Return `agent` as a tool named `name` (see the module doc).

    `pass_deps=True` runs it with the calling run's deps (`ctx.deps`); by default
    it keeps its own (`NeuronTurn(deps=...)`), as a separate agent would.
    `stream_events=True` reports its events as the call's progress while a
    stream or a progress observer listens (the module doc).

    Raises:
        ToolRegistrationError: `name` is no tool name, or `description` is empty.
    """
    if not is_tool_name(name):
        raise ToolRegistrationError(str(name), "a tool's name is 1-64 of A-Z, a-z, 0-9, _ and -")
    if not isinstance(description, str) or not description.strip():
        raise ToolRegistrationError(name, "an agent tool needs a description for the model")

    async def ask(ctx: RunContext[Any], input: str) -> Any:
        """Ask the agent.

        Args:
            ctx: The calling run's context, charged with what the agent uses.
            input: The question or task for the agent, in full: it sees nothing else.
        """
        deps = ctx.deps if pass_deps else None
        if stream_events and ctx.reporter is not None:
            output = await _streamed(agent, input, deps, ctx)
        else:
            output = (await agent.run(input, deps=deps, charge_to=ctx)).turn_output
        reason = output.exit_reason
        if reason == "complete":
            return agent.output_value(output)
        if reason == AWAITING_APPROVAL:
            why = "one of its calls waits for a person's approval, which a tool cannot give"
        else:
            why = f"it stopped without an answer ({exit_reason_text(reason)})"
        raise ToolCallError(name, f"the agent did not answer: {why}")

    return FunctionTool(ask, name=name, description=description)


async def _streamed(agent: _Agent, input: str, deps: object, ctx: RunContext[Any]) -> TurnOutput:
    """Run `agent` on `input` as a stream, reporting each event as `ctx`'s progress.

    Charged to `ctx`'s turn as `run(charge_to=ctx)` charges: what it used, or what
    it had used when it failed or was cancelled.
    """
    events = agent.stream(input, deps=deps)
    try:
        async for event in events:
            if type(event) is not TurnDone:  # the call's own result says how it ended
                await ctx.progress(event.kind, data={AGENT_EVENT_KEY: event_json(event)})
    finally:
        await events.aclose()
        try:
            used = events.usage
        except RuntimeError:
            pass  # it failed before its first step: it used nothing
        else:
            ctx.charge(used.cost, input_tokens=used.input_tokens, output_tokens=used.output_tokens)
    return events.output


def nested_event(progress: ToolProgress) -> TurnEvent | None:
    """The agent tool's own event a progress report carries (None: the report is not one).

    Raises:
        ValueError: the report's data holds `AGENT_EVENT_KEY` but no event's JSON.
    """
    data: JsonValue = progress.data
    if not isinstance(data, dict):
        return None
    event = data.get(AGENT_EVENT_KEY)
    if event is None:
        return None
    if not isinstance(event, dict):
        raise ValueError(f"{AGENT_EVENT_KEY} holds {type(event).__name__}, not an event")
    return event_from_json(event)
