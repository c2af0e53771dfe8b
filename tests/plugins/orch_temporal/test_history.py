"""Session history on Temporal: concurrent dispatches on one session keep every exchange."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    HISTORY_KEY,
    DispatchFailed,
    HistoryAppend,
    SessionScope,
    StateStore,
    TurnConfig,
    TurnInput,
    TurnOutput,
    partial_of,
)
from layer0.testing import InMemoryStore
from neuron_orch_temporal import create_worker
from neuron_orch_temporal.connect import connect
from neuron_state_sqlite import SqliteStore
from neuron_turn import (
    NeuronTurn,
    ProviderRequest,
    ProviderResponse,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
)

from ..orch_local._doubles import session_roles
from .agents import StuckAgent, agent, declaring_lead, rate_limited_agent, two_step
from .conftest import FAST, hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


def echo_agent(store: StateStore) -> dict[str, object]:
    return {"echo": agent(two_step(lambda text: [], lambda text: f"echo: {text}"), state=store)}


async def on_two_workers(
    env: WorkflowEnvironment, one: StateStore, two: StateStore, prompts: list[str]
) -> list[TurnOutput | BaseException]:
    """Dispatch `prompts` on session "s" to two workers on one queue, each with its store.

    Then check that the session holds every exchange whole, each answer after its
    message. The second worker has a client of its own, as on another machine.
    """
    async with hosting(env, echo_agent(one), one) as orchestrator:  # type: ignore[arg-type]
        address = env.client.service_client.config.target_host
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
    assert isinstance(history, list) and len(history) == 2 * len(prompts)
    pairs = list(zip(history[::2], history[1::2], strict=True))
    for user, assistant in pairs:
        assert user["role"] == "user" and assistant["role"] == "assistant"  # type: ignore[index,call-overload]
        assert assistant["content"] == f"echo: {user['content']}"  # type: ignore[index,call-overload]
    assert sorted(user["content"] for user, _ in pairs) == sorted(prompts)  # type: ignore[index,call-overload]
    return results


async def test_20_concurrent_dispatches_on_one_session_keep_every_exchange_contiguous(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    db = tmp_path / "state.db"
    prompts = [f"m{number}" for number in range(20)]
    async with SqliteStore(db) as one, SqliteStore(db) as two:
        results = await on_two_workers(dev_env, one, two, prompts)
    assert all(isinstance(result, TurnOutput) for result in results), results


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


GO = TurnInput(message="go", trigger="user", session="s1")
DECLARING = FAST.model_copy(update={"answer_delegations": False})
"""Delegations are declared and run after the turn, before its history is applied."""


async def test_a_declared_delegation_failing_before_the_turns_memory_still_has_it_applied(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    agents = {"lead": declaring_lead(store), "child": StuckAgent()}
    async with hosting(env, agents, store, policy=DECLARING) as orchestrator:
        with pytest.raises(DispatchFailed, match="the child broke"):
            await orchestrator.dispatch("lead", GO)

    # The lead's turn happened: its exchange and its write stand.
    assert await session_roles(store) == ["user", "assistant", "user", "assistant"]
    assert await store.read(SessionScope(id="s1"), "k1") == 1


async def test_a_workflow_cancelled_in_a_declared_delegation_still_applies_the_turns_memory(
    dev_env: WorkflowEnvironment,
) -> None:
    store, reached = InMemoryStore(), asyncio.Event()
    agents = {"lead": declaring_lead(store), "child": StuckAgent(reached)}
    async with hosting(dev_env, agents, store, policy=DECLARING) as orchestrator:
        workflow_id = await orchestrator.start("lead", GO)
        await reached.wait()
        assert await orchestrator.cancel(workflow_id) is True

    assert await session_roles(store) == ["user", "assistant", "user", "assistant"]
    assert await store.read(SessionScope(id="s1"), "k1") == 1


class FirstAppendFails(InMemoryStore):
    """Fails the first history append (a dropped connection), as `failed` says; then works.

    Temporal retries the memory activity after `TurnPolicy.initial_interval`:
    until then it is scheduled, and not running.
    """

    def __init__(self) -> None:
        super().__init__()
        self.failed = asyncio.Event()

    async def append_history(self, append: HistoryAppend) -> int:
        if not self.failed.is_set():
            self.failed.set()
            raise ConnectionError("the store dropped the connection")
        return await super().append_history(append)


async def test_a_workflow_cancelled_while_its_memory_waits_for_a_retry_still_applies_it(
    dev_env: WorkflowEnvironment,
) -> None:
    store = FirstAppendFails()
    answers = NeuronTurn(ScriptedProvider([text_response("hello")]), state=store)
    # Seconds between the attempts: the cancellation lands while the retry waits.
    policy = FAST.model_copy(update={"initial_interval": 3_000})
    async with hosting(dev_env, {"main": answers}, store, policy=policy) as orchestrator:
        workflow_id = await orchestrator.start("main", GO)
        await store.failed.wait()
        assert await orchestrator.cancel(workflow_id) is True

    assert await session_roles(store) == ["user", "assistant"]


async def test_a_part_whose_memory_a_cancellation_waited_for_is_handed_on_to_go_on_from(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", FirstAppendFails()
    # Reads a file, then is rate limited: its first part is kept, and its append fails once.
    reader = rate_limited_agent(tool_log, state=store, retry_after=60.0)
    policy = FAST.model_copy(update={"initial_interval": 3_000})
    async with hosting(dev_env, {"reader": reader}, store, policy=policy) as orchestrator:
        running = asyncio.ensure_future(
            orchestrator.run("reader", GO, workflow_id="cancel-in-memory")
        )
        await store.failed.wait()
        assert await orchestrator.cancel("cancel-in-memory") is True
        with pytest.raises(DispatchFailed, match="was cancelled") as raised:
            await running
        cause = raised.value.__cause__
        assert isinstance(cause, asyncio.CancelledError)
        partial = partial_of(cause)
        assert partial is not None
        later = await orchestrator.dispatch("reader", partial.continuation)

    assert later.message.as_text() == "read it; 3 messages"
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\n"
