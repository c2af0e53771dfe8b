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
"""

from __future__ import annotations

from typing import Any, Protocol

from neuron_tool import FunctionTool, RunContext, ToolCallError, ToolRegistrationError
from neuron_tool.registry import is_tool_name

from ._exit_text import exit_reason_text
from .approval import AWAITING_APPROVAL
from .run_result import RunResult

__all__ = ["agent_tool"]


class _Agent(Protocol):
    """What an agent tool runs: `NeuronTurn.run` (named so, not imported: turn imports this)."""

    async def run(
        self, message: str, *, deps: object = None, charge_to: RunContext[Any] | None = None
    ) -> RunResult[Any]: ...


def agent_tool(
    agent: _Agent, name: str, description: str, *, pass_deps: bool = False
) -> FunctionTool:
    """Return `agent` as a tool named `name` (see the module doc).

    `pass_deps=True` runs it with the calling run's deps (`ctx.deps`); by default
    it keeps its own (`NeuronTurn(deps=...)`), as a separate agent would.

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
        result = await agent.run(input, deps=deps, charge_to=ctx)
        reason = result.exit_reason
        if reason == "complete":
            return result.output
        if reason == AWAITING_APPROVAL:
            why = "one of its calls waits for a person's approval, which a tool cannot give"
        else:
            why = f"it stopped without an answer ({exit_reason_text(reason)})"
        raise ToolCallError(name, f"the agent did not answer: {why}")

    return FunctionTool(ask, name=name, description=description)
