from __future__ import annotations

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from layer0 import TurnInput
from neuron_orch_temporal import NoWorkerError, ServerUnavailableError, TemporalOrchestrator

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
