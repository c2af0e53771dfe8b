"""Session history on Temporal: concurrent dispatches on one session keep every exchange."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    HISTORY_KEY,
    DispatchFailed,
    HistoryAppend,
    SessionScope,
    TurnConfig,
    TurnInput,
    TurnOutput,
)
from neuron_orch_temporal import create_worker
from neuron_orch_temporal.connect import connect
from neuron_state_sqlite import SqliteStore
from neuron_turn import NeuronTurn, ProviderRequest, ProviderResponse
from neuron_turn.testing import FunctionProvider, text_response

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


async def test_a_dispatch_asking_to_fail_on_a_changed_session_fails_for_good(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        others = iter(range(100))

        async def meanwhile(request: ProviderRequest) -> ProviderResponse:
            # Another run finishes on the same session while this one thinks.
            other = HistoryAppend(
                session="s", turn_id=f"other-{next(others)}", messages=[{"role": "user"}]
            )
            await store.append_history(other)
            return text_response("late")

        turn = NeuronTurn(FunctionProvider(meanwhile), state=store)
        config = TurnConfig(session_conflict="fail")
        async with hosting(env, {"a": turn}, store) as orchestrator:
            with pytest.raises(DispatchFailed, match="changed while this turn ran"):
                await orchestrator.dispatch(
                    "a", TurnInput(message="mine", trigger="user", session="s", config=config)
                )
        history = await store.read(SessionScope(id="s"), HISTORY_KEY)
    # One attempt of the turn, its append refused: the other run's message only.
    assert history == [{"role": "user"}]
