"""A `pickup_timeout` past what Temporal's SDK converts still answers queries; NaN is refused."""

from __future__ import annotations

import math

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import QueryPayload, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_temporal import TemporalOrchestrator

from .conftest import hosting
from .test_review_fan_out import Echo


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("seconds", [1e300, 1e12])
async def test_a_pickup_timeout_past_a_day_still_answers_queries(
    env: WorkflowEnvironment, seconds: float
) -> None:
    # 1e300 overflowed the timedelta of the query's wait; 1e12 panicked in the SDK's core.
    async with hosting(env, {"echo": Echo()}, InMemoryStore()) as hosted:
        orchestrator = TemporalOrchestrator(
            env.client, task_queue=hosted.task_queue, pickup_timeout=seconds
        )
        result = await orchestrator.run("echo", TurnInput(message="x", trigger="user"))
        status = await orchestrator.query(
            result.workflow_id, QueryPayload(query_type="status", params=None)
        )
    assert isinstance(status, dict) and status["status"] == "completed"


@pytest.mark.parametrize("seconds", [math.nan, math.inf, 0.0, -1.0])
def test_a_pickup_timeout_that_is_no_wait_is_refused_naming_none_for_ever(seconds: float) -> None:
    with pytest.raises(ValueError, match="positive finite number of seconds, or None"):
        TemporalOrchestrator(pickup_timeout=seconds)
