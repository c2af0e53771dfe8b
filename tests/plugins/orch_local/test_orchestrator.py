from __future__ import annotations

import asyncio
from typing import Any

import pytest

from layer0 import (
    AgentNotFound,
    DispatchFailed,
    ModelError,
    Orchestrator,
    RetryableError,
    SessionScope,
    SignalPayload,
    WriteMemoryEffect,
)
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import LocalOrchestrator, RetryPolicy, WorkflowStatus

from ._doubles import FailingTurn, GatedTurn, ScriptTurn, user


def test_is_a_layer0_orchestrator() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn()}, InMemoryStore())
    assert isinstance(orchestrator, Orchestrator)


async def test_dispatch_returns_the_turn_output_and_records_a_completed_workflow() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn()}, InMemoryStore())
    result = await orchestrator.run("echo", user("hello"))
    assert result.output.message.as_text() == "hello"
    assert result.agent == "echo"
    assert result.route == ("echo",)
    record = orchestrator.workflow(result.workflow_id)
    assert record.status is WorkflowStatus.COMPLETED
    assert record.output == result.output
    assert record.parent is None
    assert (await orchestrator.dispatch("echo", user("again"))).message.as_text() == "again"


async def test_each_dispatch_gets_its_own_generated_workflow_id() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn()}, InMemoryStore())
    first = await orchestrator.run("echo", user())
    second = await orchestrator.run("echo", user())
    assert first.workflow_id != second.workflow_id


async def test_workflow_id_given_is_used() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn()}, InMemoryStore())
    await orchestrator.dispatch("echo", user(), workflow_id="wf-1")
    assert orchestrator.workflow("wf-1").status is WorkflowStatus.COMPLETED


async def test_unknown_agent_raises_agent_not_found_listing_the_agents() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn(), "b": EchoTurn()}, InMemoryStore())
    with pytest.raises(AgentNotFound, match=r"'nope'; available: b, echo") as caught:
        await orchestrator.dispatch("nope", user())
    assert caught.value.agent == "nope"


async def test_turn_error_is_wrapped_as_dispatch_failed_with_the_cause_chained() -> None:
    error = RetryableError("rate limited", retry_after=3.0)
    orchestrator = LocalOrchestrator(
        {"a": FailingTurn(error)}, InMemoryStore(), retry=RetryPolicy(max_attempts=1)
    )
    with pytest.raises(
        DispatchFailed, match=r"agent 'a' failed .*RetryableError: rate limited"
    ) as caught:
        await orchestrator.dispatch("a", user(), workflow_id="w")
    assert caught.value.__cause__ is error
    record = orchestrator.workflow("w")
    assert record.status is WorkflowStatus.FAILED
    assert record.error is not None and "rate limited" in record.error


async def test_a_running_workflow_id_is_refused() -> None:
    gated = GatedTurn()
    orchestrator = LocalOrchestrator({"g": gated}, InMemoryStore())
    running = asyncio.create_task(orchestrator.dispatch("g", user("one"), workflow_id="w"))
    assert await gated.entered.get() == "one"
    with pytest.raises(DispatchFailed, match=r"workflow 'w' is still running"):
        await orchestrator.dispatch("g", user("two"), workflow_id="w")
    gated.release("one")
    assert (await running).message.as_text() == "answer to one"
    assert orchestrator.workflow("w").status is WorkflowStatus.COMPLETED


async def test_a_finished_workflow_id_continues_that_workflow_keeping_its_inbox() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn(), "b": EchoTurn()}, InMemoryStore())
    await orchestrator.dispatch("echo", user("first"), workflow_id="w")
    await orchestrator.signal("w", SignalPayload(signal_type="ping", data=1))
    result = await orchestrator.run("b", user("second"), workflow_id="w")
    record = orchestrator.workflow("w")
    assert record.agent == "b" and record.route == ("b",) == result.route
    assert record.inbox == (SignalPayload(signal_type="ping", data=1),)
    assert record.output is not None and record.output.message.as_text() == "second"


async def test_dispatches_on_one_session_run_one_at_a_time() -> None:
    gated = GatedTurn()
    orchestrator = LocalOrchestrator({"g": gated}, InMemoryStore())
    both = asyncio.gather(
        orchestrator.dispatch("g", user("one", session="s")),
        orchestrator.dispatch("g", user("two", session="s")),
    )
    assert await gated.entered.get() == "one"
    assert gated.entered.empty()
    gated.release("one")
    assert await gated.entered.get() == "two"
    gated.release("two")
    await both
    assert gated.peak == 1


async def test_dispatches_on_different_sessions_run_concurrently() -> None:
    gated = GatedTurn()
    orchestrator = LocalOrchestrator({"g": gated}, InMemoryStore())
    both = asyncio.gather(
        orchestrator.dispatch("g", user("one", session="s1")),
        orchestrator.dispatch("g", user("two", session="s2")),
    )
    entered = {await gated.entered.get(), await gated.entered.get()}
    assert entered == {"one", "two"}
    assert gated.active == 2
    gated.release("one")
    gated.release("two")
    await both
    assert gated.peak == 2


async def test_a_turn_output_without_effects_touches_no_store() -> None:
    store = InMemoryStore()
    orchestrator = LocalOrchestrator({"a": ScriptTurn()}, store)
    await orchestrator.dispatch("a", user(session="s"))
    assert await store.list(SessionScope(id="s"), "") == []


async def test_history_write_of_a_session_turn_is_stored() -> None:
    effect = WriteMemoryEffect(scope=SessionScope(id="s"), key="messages", value=[{"role": "user"}])
    store = InMemoryStore()
    orchestrator = LocalOrchestrator({"a": ScriptTurn(effect)}, store)
    await orchestrator.dispatch("a", user(session="s"))
    assert await store.read(SessionScope(id="s"), "messages") == [{"role": "user"}]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_depth": -1}, "max_depth must not be negative"),
        ({"max_concurrency": 0}, "max_concurrency must be at least 1"),
        ({"max_workflows": 0}, "max_workflows must be at least 1"),
    ],
)
def test_bad_limits_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LocalOrchestrator({"echo": EchoTurn()}, InMemoryStore(), **options)


def test_an_agent_that_is_not_a_turn_is_refused() -> None:
    with pytest.raises(TypeError, match=r"agent 'x' is not a layer0.Turn"):
        LocalOrchestrator({"x": object()}, InMemoryStore())  # type: ignore[dict-item]


def test_a_store_that_is_not_a_state_store_is_refused() -> None:
    with pytest.raises(TypeError, match=r"store is not a layer0.StateStore"):
        LocalOrchestrator({"echo": EchoTurn()}, object())  # type: ignore[arg-type]


async def test_old_finished_workflows_are_dropped_past_max_workflows() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn()}, InMemoryStore(), max_workflows=2)
    for name in ("w1", "w2", "w3"):
        await orchestrator.dispatch("echo", user(), workflow_id=name)
    assert orchestrator.workflow("w3").status is WorkflowStatus.COMPLETED
    assert orchestrator.workflow("w2").status is WorkflowStatus.COMPLETED
    with pytest.raises(LookupError):
        orchestrator.workflow("w1")


async def test_model_error_is_kept_as_cause() -> None:
    orchestrator = LocalOrchestrator({"a": FailingTurn(ModelError("truncated"))}, InMemoryStore())
    with pytest.raises(DispatchFailed) as caught:
        await orchestrator.dispatch("a", user())
    assert isinstance(caught.value.__cause__, ModelError)


async def test_running_workflows_are_never_dropped() -> None:
    gated = GatedTurn()
    orchestrator = LocalOrchestrator(
        {"g": gated, "echo": EchoTurn()}, InMemoryStore(), max_workflows=1
    )
    running = asyncio.create_task(orchestrator.dispatch("g", user("one"), workflow_id="long"))
    await gated.entered.get()
    await orchestrator.dispatch("echo", user(), workflow_id="w1")
    await orchestrator.dispatch("echo", user(), workflow_id="w2")
    assert orchestrator.workflow("long").status is WorkflowStatus.RUNNING
    gated.release("one")
    await running
    assert orchestrator.workflow("long").status is WorkflowStatus.COMPLETED
