"""Temporal workers sharing one PostgreSQL store: the sessions are the same wherever a turn runs."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import TurnOutput
from neuron_state_postgres import PostgresStore

from ..orch_temporal.conftest import dev_env
from ..orch_temporal.test_history import on_two_workers

__all__ = ["dev_env"]

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_two_workers_with_their_own_stores_on_one_database_keep_one_session_whole(
    dev_env: WorkflowEnvironment, conninfo: str, schema: str
) -> None:
    prompts = [f"m{number}" for number in range(10)]
    async with (
        PostgresStore(conninfo, schema=schema) as one,
        PostgresStore(conninfo, schema=schema) as two,
    ):
        results = await on_two_workers(dev_env, one, two, prompts)

    assert all(isinstance(result, TurnOutput) for result in results), results
