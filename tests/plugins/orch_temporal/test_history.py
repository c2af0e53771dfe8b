"""Session history on Temporal: concurrent dispatches on one session keep every exchange."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, SessionScope, TurnInput, TurnOutput
from neuron_orch_temporal import create_worker
from neuron_orch_temporal.connect import connect
from neuron_state_sqlite import SqliteStore

from .agents import agent, two_step
from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


def echo_agent(store: SqliteStore) -> dict[str, object]:
    return {"echo": agent(two_step(lambda text: [], lambda text: f"echo: {text}"), state=store)}


async def test_20_concurrent_dispatches_on_one_session_keep_every_exchange_contiguous(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    db = tmp_path / "state.db"
    prompts = [f"m{number}" for number in range(20)]
    async with SqliteStore(db) as one, SqliteStore(db) as two:
        async with hosting(dev_env, echo_agent(one), one) as orchestrator:  # type: ignore[arg-type]
            # A second worker (its own client) on the same queue and file: turns land on both.
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
        history = await one.read(SessionScope(id="s"), HISTORY_KEY)
    assert all(isinstance(result, TurnOutput) for result in results), results
    assert isinstance(history, list) and len(history) == 40
    pairs = list(zip(history[::2], history[1::2], strict=True))
    for user, assistant in pairs:
        assert user["role"] == "user" and assistant["role"] == "assistant"  # type: ignore[index,call-overload]
        assert assistant["content"] == f"echo: {user['content']}"  # type: ignore[index,call-overload]
    assert sorted(user["content"] for user, _ in pairs) == sorted(prompts)  # type: ignore[index,call-overload]
