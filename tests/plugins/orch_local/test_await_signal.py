"""A turn that asks to `await_signal` is woken by the next signal to its workflow."""

from __future__ import annotations

import asyncio

from layer0 import (
    QueryPayload,
    SignalEffect,
    SignalPayload,
    TurnInput,
    TurnMetadata,
    TurnOutput,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import AWAITING_SIGNAL, SIGNAL_KEY, LocalOrchestrator

from ._doubles import ScriptTurn, trusting, user


class Waiter:
    """Asks to await a signal on its first turn; answers with what woke it after that."""

    def __init__(self) -> None:
        self.inputs: list[TurnInput] = []
        self.waiting = asyncio.Event()

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.inputs.append(input)
        if len(self.inputs) == 1:
            self.waiting.set()
            return TurnOutput(
                message="waiting", exit_reason=AWAITING_SIGNAL, metadata=TurnMetadata.zero()
            )
        return TurnOutput(
            message=f"woken by: {input.message.as_text()}",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
        )


APPROVE = SignalPayload(signal_type="approve", data={"by": "ana"})


async def test_the_next_signal_starts_the_waiting_agents_next_turn() -> None:
    waiter = Waiter()
    orchestrator = LocalOrchestrator({"w": waiter}, InMemoryStore())
    running = asyncio.create_task(orchestrator.dispatch("w", user("start"), workflow_id="wf"))
    await waiter.waiting.wait()

    await orchestrator.signal("wf", APPROVE)
    output = await running

    assert output.message.as_text() == """woken by: Signal 'approve' received: {"by": "ana"}"""
    woken = waiter.inputs[1]
    assert woken.trigger == "signal"
    assert woken.metadata == {SIGNAL_KEY: {"signal_type": "approve", "data": {"by": "ana"}}}
    inbox = await orchestrator.query("wf", QueryPayload(query_type="inbox", params=None))
    assert inbox == [APPROVE.model_dump(mode="json")]


async def test_a_signal_effect_from_another_agent_wakes_the_waiting_turn() -> None:
    waiter = Waiter()
    sender = ScriptTurn(SignalEffect(target="wf", payload=APPROVE), reply="sent")
    orchestrator = trusting({"w": waiter, "s": sender}, InMemoryStore())
    running = asyncio.create_task(orchestrator.dispatch("w", user("start"), workflow_id="wf"))
    await waiter.waiting.wait()

    assert (await orchestrator.dispatch("s", user())).message.as_text() == "sent"

    assert (await running).message.as_text().startswith("woken by: Signal 'approve'")  # type: ignore[union-attr]


async def test_a_signal_that_came_while_the_turn_ran_is_taken_at_once() -> None:
    waiter = Waiter()
    orchestrator = LocalOrchestrator({"w": waiter}, InMemoryStore(), signal_timeout=0)
    waiting_turn = waiter.execute

    async def signalled_early(input: TurnInput) -> TurnOutput:
        if not waiter.inputs:
            await orchestrator.signal("wf", APPROVE)
        return await waiting_turn(input)

    waiter.execute = signalled_early  # type: ignore[method-assign]

    output = await orchestrator.dispatch("w", user("first"), workflow_id="wf")

    assert output.exit_reason == "complete"  # no wait, so no timeout either
    assert len(waiter.inputs) == 2


async def test_without_a_signal_in_time_the_workflow_ends_with_the_waiting_output() -> None:
    waiter = Waiter()
    orchestrator = LocalOrchestrator({"w": waiter}, InMemoryStore(), signal_timeout=0)

    output = await orchestrator.dispatch("w", user(), workflow_id="wf")

    assert output.exit_reason == AWAITING_SIGNAL
    assert len(waiter.inputs) == 1
    status = await orchestrator.query("wf", QueryPayload(query_type="status", params=None))
    assert isinstance(status, dict) and status["status"] == "completed"
