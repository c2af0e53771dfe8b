from __future__ import annotations

import asyncio

import pytest

from layer0 import (
    DispatchFailed,
    OrchError,
    QueryPayload,
    SignalPayload,
    WorkflowNotFound,
)
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import LocalOrchestrator, UnknownQueryError

from ._doubles import FailingTurn, GatedTurn, trusting, user


def ask(query_type: str) -> QueryPayload:
    return QueryPayload(query_type=query_type, params=None)


@pytest.fixture
def orchestrator() -> LocalOrchestrator:
    return trusting({"echo": EchoTurn()}, InMemoryStore())


async def test_signal_to_an_unknown_workflow_raises_workflow_not_found(
    orchestrator: LocalOrchestrator,
) -> None:
    with pytest.raises(WorkflowNotFound, match=r"no workflow with id 'ghost'") as caught:
        await orchestrator.signal("ghost", SignalPayload(signal_type="x", data=None))
    assert caught.value.workflow == "ghost"


async def test_query_of_an_unknown_workflow_raises_workflow_not_found(
    orchestrator: LocalOrchestrator,
) -> None:
    with pytest.raises(WorkflowNotFound):
        await orchestrator.query("ghost", ask("status"))


async def test_signals_reach_the_inbox_in_order(orchestrator: LocalOrchestrator) -> None:
    await orchestrator.dispatch("echo", user(), workflow_id="w")
    await orchestrator.signal("w", SignalPayload(signal_type="a", data={"n": 1}))
    await orchestrator.signal("w", SignalPayload(signal_type="b", data=None))
    assert await orchestrator.query("w", ask("inbox")) == [
        {"signal_type": "a", "data": {"n": 1}},
        {"signal_type": "b", "data": None},
    ]


async def test_status_of_a_completed_workflow(orchestrator: LocalOrchestrator) -> None:
    await orchestrator.dispatch("echo", user(), workflow_id="w")
    assert await orchestrator.query("w", ask("status")) == {
        "workflow_id": "w",
        "status": "completed",
        "agent": "echo",
        "exit_reason": "complete",
        "parent": None,
        "route": ["echo"],
        "error": None,
    }


async def test_status_of_a_failed_workflow_says_why() -> None:
    orchestrator = trusting({"a": FailingTurn(ValueError("bad"))}, InMemoryStore())
    with pytest.raises(DispatchFailed):
        await orchestrator.dispatch("a", user(), workflow_id="w")
    status = await orchestrator.query("w", ask("status"))
    assert isinstance(status, dict)
    assert status["status"] == "failed"
    assert status["exit_reason"] is None
    assert isinstance(status["error"], str) and "ValueError: bad" in status["error"]


async def test_output_query_returns_the_last_output_as_json(
    orchestrator: LocalOrchestrator,
) -> None:
    output = await orchestrator.dispatch("echo", user("hello"), workflow_id="w")
    assert await orchestrator.query("w", ask("output")) == output.model_dump(mode="json")


async def test_a_running_workflow_can_be_signalled_and_queried() -> None:
    gated = GatedTurn()
    orchestrator = trusting({"g": gated}, InMemoryStore())
    running = asyncio.create_task(orchestrator.dispatch("g", user("one"), workflow_id="w"))
    await gated.entered.get()
    status = await orchestrator.query("w", ask("status"))
    assert isinstance(status, dict) and status["status"] == "running"
    assert await orchestrator.query("w", ask("output")) is None
    await orchestrator.signal("w", SignalPayload(signal_type="stop", data=None))
    gated.release("one")
    await running
    status = await orchestrator.query("w", ask("status"))
    assert isinstance(status, dict) and status["status"] == "completed"
    assert await orchestrator.query("w", ask("inbox")) == [{"signal_type": "stop", "data": None}]


async def test_unknown_query_type_fails_listing_the_known_ones(
    orchestrator: LocalOrchestrator,
) -> None:
    await orchestrator.dispatch("echo", user(), workflow_id="w")
    with pytest.raises(
        UnknownQueryError,
        match=r"unknown query type 'progress'; supported: delegations, inbox, output, status",
    ) as caught:
        await orchestrator.query("w", ask("progress"))
    assert isinstance(caught.value, OrchError)
    assert caught.value.query_type == "progress"
