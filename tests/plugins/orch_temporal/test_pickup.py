"""No worker there: each wait for one is bounded, and its error says how to start one."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from layer0 import QueryPayload, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_temporal import (
    DecisionsPendingError,
    NoWorkerError,
    QueryUnansweredError,
    ServerUnavailableError,
    TemporalOrchestrator,
    create_worker,
)
from neuron_orch_temporal.orchestrator import _unanswered
from neuron_turn import Decision

from .agents import cleaner_agent
from .conftest import FAST
from .test_approvals import TIDY, runs

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_dispatch_no_worker_picks_up_fails_clearly_and_is_terminated(
    dev_env: WorkflowEnvironment,
) -> None:
    # The dev server, not the time-skipping one: a workflow task nobody ever
    # polled keeps the test server from skipping time for the rest of the session.
    env = dev_env
    orchestrator = TemporalOrchestrator(env.client, task_queue="nobody-home", pickup_timeout=0.5)
    with pytest.raises(NoWorkerError) as caught:
        await orchestrator.dispatch(
            "anyone", TurnInput(message="x", trigger="user"), workflow_id="lonely-1"
        )
    message = str(caught.value)
    assert (
        "no worker picked up workflow 'lonely-1' on task queue 'nobody-home' within 0.5 s"
        in message
    )
    assert "neuron-turn worker --address" in message and "--task-queue nobody-home" in message
    description = await env.client.get_workflow_handle("lonely-1").describe()
    assert description.status == WorkflowExecutionStatus.TERMINATED


async def test_an_unreachable_server_fails_clearly() -> None:
    orchestrator = TemporalOrchestrator(address="127.0.0.1:1")
    with pytest.raises(
        ServerUnavailableError, match=r"cannot reach a Temporal server at 127\.0\.0\.1:1"
    ):
        await orchestrator.dispatch("anyone", TurnInput(message="x", trigger="user"))


async def test_a_query_no_worker_answers_fails_within_the_pickup_timeout_naming_the_fix(
    dev_env: WorkflowEnvironment,
) -> None:
    queue = f"nobody-{uuid.uuid4()}"
    orchestrator = TemporalOrchestrator(dev_env.client, task_queue=queue, pickup_timeout=1)
    workflow_id = await orchestrator.start("anyone", TurnInput(message="x", trigger="user"))

    with pytest.raises(QueryUnansweredError) as approvals:
        await orchestrator.awaiting(workflow_id)
    with pytest.raises(QueryUnansweredError) as status:
        await orchestrator.query(workflow_id, QueryPayload(query_type="status", params=None))

    address = dev_env.client.service_client.config.target_host
    # Not Temporal's own "Timeout expired", and within the second asked for, not 30.
    assert str(approvals.value) == (
        f"no worker answered query 'approvals' about workflow {workflow_id!r} within 1 s: "
        f"a worker polling task queue {queue!r} answers it, and none is, or it is busy; "
        f"start one with `neuron-turn worker --address {address} --task-queue {queue}`"
    )
    assert (status.value.query, status.value.task_queue) == ("status", queue)


@pytest.mark.parametrize(
    ("status", "message", "unanswered"),
    [
        (RPCStatusCode.FAILED_PRECONDITION, "no poller seen for task queue recently", True),
        (RPCStatusCode.CANCELLED, "Timeout expired", True),
        (RPCStatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded", True),
        (RPCStatusCode.FAILED_PRECONDITION, "workflow is busy", False),
        (RPCStatusCode.PERMISSION_DENIED, "no poller for you", False),
    ],
)
async def test_only_a_query_waiting_for_a_worker_counts_as_unanswered(
    status: RPCStatusCode, message: str, unanswered: bool
) -> None:
    assert _unanswered(RPCError(message, status, b"")) is unanswered


async def test_decisions_no_worker_takes_say_so_and_the_next_worker_resumes_the_turn_with_them(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    queue = f"test-{uuid.uuid4()}"
    orchestrator = TemporalOrchestrator(
        dev_env.client, task_queue=queue, policy=FAST, pickup_timeout=1
    )
    agents = {"cleaner": cleaner_agent(log, state=store)}
    async with create_worker(dev_env.client, agents=agents, store=store, task_queue=queue):
        await orchestrator.run("cleaner", TIDY, workflow_id="decide-orphaned")
    # Its worker is gone: nobody is there to take the decisions.
    # Bounded, so that a wait for a worker that never comes fails here rather than hangs.
    async with asyncio.timeout(30):
        with pytest.raises(DecisionsPendingError) as pending:
            await orchestrator.decide("decide-orphaned", [Decision.approve("c2")])
    ran_meanwhile = runs(log)
    async with create_worker(dev_env.client, agents=agents, store=store, task_queue=queue):
        async with asyncio.timeout(60):
            done = await orchestrator.result("decide-orphaned")

    assert str(pending.value).startswith(
        "workflow 'decide-orphaned' was sent the decisions, but no worker took them within "
        f"1 s; the next worker to poll task queue {queue!r} takes them and resumes the turn, "
        "so do not send them again: start one with `neuron-turn worker --address "
    )
    assert ran_meanwhile == ["read notes.txt"]
    # Taken once, by the next worker, as it said.
    assert done.output.message.as_text() == "contents of notes.txt; deleted old.log"
    assert runs(log) == ["read notes.txt", "delete old.log"]
