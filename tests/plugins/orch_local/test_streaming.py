"""`LocalOrchestrator.stream`: every turn's events pass through; effects as `run` does them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from layer0 import DispatchFailed, EffectPolicy, RetryableError, SessionScope, TurnInput
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import AgentEvent, LocalOrchestrator, RetryPolicy
from neuron_tool import ToolRegistry
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderConnectionError,
    ProviderRequest,
    ProviderResponse,
    TextDelta,
    ToolUsePart,
    TurnDone,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response


def ask(message: str = "hi", session: str | None = "s1") -> TurnInput:
    return TurnInput(message=message, trigger="user", session=session)


def neuron(provider: Any, store: InMemoryStore, **config: Any) -> NeuronTurn:
    return NeuronTurn(
        provider, tools=ToolRegistry(), state=store, config=NeuronTurnConfig(model="m", **config)
    )


async def test_a_streamed_dispatch_passes_on_the_turns_events_and_writes_its_history() -> None:
    store = InMemoryStore()
    turn = neuron(ScriptedProvider([text_response("Hello there.")], chunk_size=4), store)
    orchestrator = LocalOrchestrator({"main": turn}, store)

    async with orchestrator.stream("main", ask()) as events:
        items = [item async for item in events]

    assert all(isinstance(item, AgentEvent) and item.agent == "main" for item in items)
    texts = [item.event.text for item in items if isinstance(item.event, TextDelta)]
    assert texts == ["Hell", "o th", "ere."]
    last = items[-1].event
    assert isinstance(last, TurnDone)
    assert events.result.output == last.output
    assert items[-1].workflow_id == events.result.workflow_id
    assert await store.read(SessionScope(id="s1"), "messages") is not None


async def test_a_turn_cut_off_mid_stream_fails_the_dispatch_and_writes_nothing() -> None:
    store = InMemoryStore()
    cut = [TextDelta("Hel"), ProviderConnectionError("stream cut off", provider="x")]
    orchestrator = LocalOrchestrator(
        {"main": neuron(ScriptedProvider([cut]), store)}, store, retry=RetryPolicy(max_attempts=1)
    )
    seen = []

    with pytest.raises(DispatchFailed) as caught:
        async for item in orchestrator.stream("main", ask()):
            seen.append(item.event)

    assert isinstance(caught.value.__cause__, RetryableError)
    assert TextDelta("Hel") in seen
    assert await store.read(SessionScope(id="s1"), "messages") is None


async def test_a_turn_that_cannot_stream_is_reported_by_its_output() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn()}, InMemoryStore())

    items = [item async for item in orchestrator.stream("echo", ask("ping", session=None))]

    assert [type(item.event) for item in items] == [TurnDone]
    event = items[0].event
    assert isinstance(event, TurnDone) and event.output.message.as_text() == "ping"


async def test_a_delegated_agents_events_come_tagged_with_that_agent() -> None:
    store = InMemoryStore()
    delegate = ToolUsePart("c1", "delegate", {"agent": "helper", "message": "help"})
    grant = EffectPolicy.of(["delegate:helper"])
    main = neuron(
        ScriptedProvider([tool_call_response(delegate), text_response("main done")]),
        store,
        effect_policy=grant,
    )
    helper = neuron(ScriptedProvider([text_response("helped")]), store)
    orchestrator = LocalOrchestrator(
        {"main": main, "helper": helper}, store, policies={"main": grant}
    )

    items = [item async for item in orchestrator.stream("main", ask(session=None))]

    texts = [(i.agent, i.event.text) for i in items if isinstance(i.event, TextDelta)]
    assert ("main", "main done") in texts
    assert ("helper", "helped") in texts
    assert {item.workflow_id for item in items if item.agent == "helper"} != {items[0].workflow_id}


async def test_cancelling_the_consumer_cancels_the_dispatch_and_its_provider_stream() -> None:
    closed = asyncio.Event()

    class Hanging:
        async def complete(self, request: ProviderRequest) -> ProviderResponse:
            raise AssertionError("streamed")

        async def stream(self, request: ProviderRequest) -> Any:
            try:
                yield TextDelta("first")
                await asyncio.Event().wait()
            finally:
                closed.set()

    store = InMemoryStore()
    orchestrator = LocalOrchestrator({"main": neuron(Hanging(), store)}, store)
    got_first = asyncio.Event()

    async def consume() -> None:
        async with orchestrator.stream("main", ask()) as events:
            async for item in events:
                if isinstance(item.event, TextDelta):
                    got_first.set()

    consumer = asyncio.create_task(consume())
    await got_first.wait()
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer

    assert closed.is_set()
    assert asyncio.all_tasks() == {asyncio.current_task()}
