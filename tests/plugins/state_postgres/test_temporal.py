"""Temporal workers sharing one PostgreSQL store: the sessions are the same wherever a turn runs."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, SessionScope, TurnInput, TurnOutput
from neuron_orch_temporal import create_worker
from neuron_orch_temporal.connect import connect
from neuron_state_postgres import PostgresStore

from ..orch_temporal.agents import agent, two_step
from ..orch_temporal.conftest import dev_env, hosting

__all__ = ["dev_env"]

pytestmark = pytest.mark.asyncio(loop_scope="session")


def echo_agent(store: PostgresStore) -> dict[str, object]:
    return {"echo": agent(two_step(lambda text: [], lambda text: f"echo: {text}"), state=store)}


async def test_two_workers_with_their_own_stores_on_one_database_keep_one_session_whole(
    dev_env: WorkflowEnvironment, conninfo: str, schema: str
) -> None:
    prompts = [f"m{number}" for number in range(10)]
    async with (
        PostgresStore(conninfo, schema=schema) as one,
        PostgresStore(conninfo, schema=schema) as two,
    ):
        async with hosting(dev_env, echo_agent(one), one) as orchestrator:  # type: ignore[arg-type]
            # A second worker (its own client and store, as on another machine), same queue.
            address = dev_env.client.service_client.config.target_host
            second = create_worker(
                await connect(address),
                agents=echo_agent(two),  # type: ignore[arg-type]
                store=two,
                task_queue=orchestrator.task_queue,
            )
            async with second:
                results = await orchestrator.dispatch_many(
                    [("echo", TurnInput(message=p, trigger="user", session="s")) for p in prompts]
                )
        history = await two.read(SessionScope(id="s"), HISTORY_KEY)

    assert all(isinstance(result, TurnOutput) for result in results), results
    assert isinstance(history, list) and len(history) == 20
    pairs = list(zip(history[::2], history[1::2], strict=True))
    for user, assistant in pairs:
        assert assistant["content"] == f"echo: {user['content']}"  # type: ignore[index,call-overload]
    assert sorted(user["content"] for user, _ in pairs) == sorted(prompts)  # type: ignore[index,call-overload]
