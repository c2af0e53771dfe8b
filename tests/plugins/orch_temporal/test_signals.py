from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    CustomExit,
    QueryPayload,
    SignalFailed,
    SignalPayload,
    TurnInput,
    WorkflowNotFound,
)
from layer0.testing import InMemoryStore

from .agents import Calls, DeclaringTurn, WaiterTurn, agent, sender_agent, two_step
from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


def task(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user")


def agents() -> dict[str, object]:
    def to_waiter(text: str) -> Calls:
        return [("handoff", {"agent": "waiter", "state": None})]

    def send(text: str) -> Calls:
        return [("signal", {"target": text.split()[-1], "signal_type": "go", "data": None})]

    return {
        "waiter": WaiterTurn(),
        "sender": sender_agent(),
        "rogue": DeclaringTurn(send),
        "desk": agent(two_step(to_waiter, lambda t: "handing off")),
    }


async def test_a_signal_effect_of_one_agent_wakes_another(env: WorkflowEnvironment) -> None:
    async with hosting(env, agents(), InMemoryStore()) as orchestrator:  # type: ignore[arg-type]
        # Real time: skipping would run the waiter's signal timeout out first.
        with env.auto_time_skipping_disabled():
            await orchestrator.start("waiter", task("wait"), workflow_id="waiter-1")
            sent = await orchestrator.dispatch("sender", task("signal waiter-1"))
            woken = await orchestrator.result("waiter-1")
            inbox = await orchestrator.query(
                "waiter-1", QueryPayload(query_type="inbox", params=None)
            )
    assert sent.message.as_text() == "sent"
    assert woken.output.message.as_text() == "woken by go: {'from': 'sender'}"
    assert woken.route == ("waiter", "waiter")
    assert inbox == [{"signal_type": "go", "data": {"from": "sender"}}]


async def test_the_caller_signals_a_waiting_workflow(env: WorkflowEnvironment) -> None:
    async with hosting(env, agents(), InMemoryStore()) as orchestrator:  # type: ignore[arg-type]
        with env.auto_time_skipping_disabled():
            await orchestrator.start("waiter", task("wait"), workflow_id="waiter-2")
            await orchestrator.signal("waiter-2", SignalPayload(signal_type="poke", data=[1, 2]))
            woken = await orchestrator.result("waiter-2")
    assert woken.output.message.as_text() == "woken by poke: [1, 2]"


async def test_a_waiting_workflow_ends_with_its_last_output_when_no_signal_comes(
    env: WorkflowEnvironment,
) -> None:
    async with hosting(env, agents(), InMemoryStore()) as orchestrator:  # type: ignore[arg-type]
        result = await orchestrator.run("waiter", task("wait"), workflow_id="waiter-3")
    assert result.output.exit_reason == CustomExit(name="await_signal")
    assert result.route == ("waiter",)


async def test_signals_to_finished_or_unknown_workflows_fail(env: WorkflowEnvironment) -> None:
    async with hosting(env, agents(), InMemoryStore()) as orchestrator:  # type: ignore[arg-type]
        await orchestrator.run("waiter", task("wait"), workflow_id="waiter-4")
        with pytest.raises(SignalFailed, match="'waiter-4' has finished"):
            await orchestrator.signal("waiter-4", SignalPayload(signal_type="late", data=None))
        # Declared unchecked: a model signalling these is told so as it calls.
        with pytest.raises(SignalFailed, match="signals workflow 'waiter-4', which has finished"):
            await orchestrator.dispatch("rogue", task("signal waiter-4"))
        with pytest.raises(WorkflowNotFound, match="signals workflow 'ghost', which does not"):
            await orchestrator.dispatch("rogue", task("signal ghost"))


async def test_signals_to_a_workflow_that_handed_off_reach_the_new_agent(
    env: WorkflowEnvironment,
) -> None:
    async with hosting(env, agents(), InMemoryStore()) as orchestrator:  # type: ignore[arg-type]
        with env.auto_time_skipping_disabled():
            await orchestrator.start("desk", task("help"), workflow_id="desk-1")
            # Before or after the handoff starts: either way the waiter gets it.
            await orchestrator.signal("desk-1", SignalPayload(signal_type="news", data="hi"))
            result = await orchestrator.result("desk-1")
    assert result.route == ("desk", "waiter", "waiter")
    assert result.output.message.as_text() == "woken by news: hi"
