"""Results summed past 2 MiB from parts under it fail clearly, once, rather than hang or rerun."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    DelegateEffect,
    DispatchFailed,
    HandoffEffect,
    SignalPayload,
    TurnInput,
    TurnMetadata,
    TurnOutput,
)
from layer0.testing import InMemoryStore

from .agents import Calls, WaiterTurn, agent, two_step
from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

BIG = "x" * (1200 * 1024)
"""An answer under Temporal's 2 MiB; two of them are past it."""
ASK = TurnInput(message="go", trigger="user")


class Big:
    """Answers 1.2 MB."""

    async def execute(self, input: TurnInput) -> TurnOutput:
        return TurnOutput(message=BIG, exit_reason="complete", metadata=TurnMetadata.zero())


class Lead:
    """Declares two delegations to `big`, counting its turns."""

    def __init__(self) -> None:
        self.turns = 0

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.turns += 1
        effects = [DelegateEffect(agent="big", input=ASK), DelegateEffect(agent="big", input=ASK)]
        return TurnOutput(
            message="done", exit_reason="complete", metadata=TurnMetadata.zero(), effects=effects
        )


async def test_a_result_past_the_limit_from_two_delegations_fails_naming_it_not_hangs(
    dev_env: WorkflowEnvironment,
) -> None:
    # The real server, which refuses payloads past 2 MiB (the test server takes them).
    lead = Lead()
    async with hosting(dev_env, {"lead": lead, "big": Big()}, InMemoryStore()) as orchestrator:
        with pytest.raises(DispatchFailed) as raised:
            # The server refuses the completion for ever: without the check this waits on.
            await asyncio.wait_for(orchestrator.dispatch("lead", ASK, workflow_id="big-1"), 30)
    message = str(raised.value)
    assert "PayloadTooLargeError: agent 'lead': the turn's result" in message
    assert "the agents it delegated to" in message and "(workflow big-1)" in message
    assert lead.turns == 1


async def test_a_turn_whose_answered_delegations_are_past_the_limit_fails_once(
    dev_env: WorkflowEnvironment,
) -> None:
    # The real server: the test server's clock jumps while an activity awaits a workflow.
    planned: list[str] = []

    def plan(text: str) -> Calls:
        planned.append(text)
        return [("delegate", {"agent": "big", "message": m}) for m in ("a", "b")]

    lead = agent(two_step(plan, lambda text: "done"))
    async with hosting(dev_env, {"lead": lead, "big": Big()}, InMemoryStore()) as orchestrator:
        with pytest.raises(DispatchFailed) as raised:
            await orchestrator.dispatch("lead", ASK, workflow_id="big-2")
    message = str(raised.value)
    assert "PayloadTooLargeError: agent 'lead': the turn's result" in message
    assert len(planned) == 1  # not retried: the model and its tools ran once


HALF = "y" * (1100 * 1024)
"""Under the limit once; past it twice, as a signal's data and a handoff's state are carried."""


async def test_a_signal_past_half_the_limit_fails_its_workflow_naming_it_not_hangs(
    dev_env: WorkflowEnvironment,
) -> None:
    async with hosting(dev_env, {"waiter": WaiterTurn()}, InMemoryStore()) as orchestrator:
        await orchestrator.start("waiter", ASK, workflow_id="big-signal")
        await orchestrator.signal("big-signal", SignalPayload(signal_type="note", data=HALF))
        with pytest.raises(DispatchFailed) as raised:
            # The next turn's request was past the limit: refused on every task retry before.
            await asyncio.wait_for(orchestrator.result("big-signal"), 30)
    message = str(raised.value)
    assert "PayloadTooLargeError: agent 'waiter': the turn's input is" in message
    assert "(workflow big-signal)" in message


class HandingOff:
    """Hands off to `echo` with a large state."""

    async def execute(self, input: TurnInput) -> TurnOutput:
        return TurnOutput(
            message="over to echo",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=[HandoffEffect(agent="echo", state=HALF)],
        )


async def test_a_handoff_whose_state_makes_its_input_too_large_fails_naming_it(
    dev_env: WorkflowEnvironment,
) -> None:
    agents = {"lead": HandingOff(), "echo": Big()}
    async with hosting(dev_env, agents, InMemoryStore()) as orchestrator:
        with pytest.raises(DispatchFailed) as raised:
            await asyncio.wait_for(orchestrator.dispatch("lead", ASK, workflow_id="big-hand"), 30)
    assert "PayloadTooLargeError: agent 'echo': the turn's input is" in str(raised.value)
