"""On Temporal, a run delegated without a session names the session it was delegated for.

The worker's activity records each turn (`layer0.TurnRecord`); a turn run
without a session in a delegated workflow records the nearest delegating
session at any depth (`delegated_for`), carried in what starts the child
workflow and the turn's activity, so `neuron_turn.forget_session` finds the
records of one-way delegations, which no delegation log names. Real dev
server, real worker, a SQLite store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    DelegateEffect,
    Effect,
    HandoffEffect,
    NonRetryableError,
    OrchError,
    SessionId,
    Turn,
    TurnInput,
    TurnMetadata,
    TurnOutput,
)
from neuron_orch_local import Chain
from neuron_orch_temporal import TurnPolicy
from neuron_orch_temporal.messages import TurnRequest, WorkflowInput
from neuron_state_sqlite import SqliteStore
from neuron_turn import forget_session
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .conftest import hosting
from .test_answers import agent, delegate_call

pytestmark = pytest.mark.asyncio(loop_scope="session")


class Hands:
    """A hand-written turn: it says what it was given and, if told to, delegates it on, one way.

    A `delegate` effect declared in its output: the workflow runs the child after the
    turn, in a child workflow, and no delegation log names it.
    """

    def __init__(self, to: str | None = None, session: SessionId | None = None) -> None:
        self.to, self.session = to, session

    async def execute(self, input: TurnInput) -> TurnOutput:
        task = input.message.as_text() or ""
        effects: list[Effect] = []
        if self.to is not None:
            handed = f"{task} via {self.to}"
            given = TurnInput(message=handed, trigger="user", session=self.session)
            effects.append(DelegateEffect(agent=self.to, input=given))
        return TurnOutput(
            message=f"did {task}",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=effects,
        )


@pytest_asyncio.fixture(loop_scope="session")
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    async with SqliteStore(tmp_path / "state.db") as opened:
        yield opened


async def run(
    env: WorkflowEnvironment,
    store: SqliteStore,
    agents: Mapping[str, Turn],
    session: SessionId,
    task: str,
) -> None:
    """Dispatch `task` to `lead` on `session`; its delegations all run before it returns."""
    async with hosting(env, agents, store) as orchestrator:
        await orchestrator.run("lead", TurnInput(message=task, trigger="user", session=session))


async def records(store: SqliteStore) -> dict[str, tuple[SessionId | None, SessionId | None]]:
    """Every turn record: its task, to its session and the session it was delegated for."""
    found: dict[str, tuple[SessionId | None, SessionId | None]] = {}
    for summary in await store.turn_summaries(limit=1000):
        record = await store.turn_record(summary.turn_id)
        assert record is not None
        found[record.input.message.as_text() or ""] = (record.session, record.delegated_for)
    return found


async def test_a_one_way_delegation_without_a_session_is_recorded_for_its_session_and_forgotten(
    dev_env: WorkflowEnvironment, store: SqliteStore
) -> None:
    agents = {"lead": Hands(to="helper"), "helper": Hands()}
    await run(dev_env, store, agents, "bob", "bobs-task")
    await run(dev_env, store, agents, "alice", "alices-task")
    assert await records(store) == {
        "bobs-task": ("bob", None),
        "bobs-task via helper": (None, "bob"),
        "alices-task": ("alice", None),
        "alices-task via helper": (None, "alice"),
    }

    forgotten = await forget_session(store, "alice")

    assert len(forgotten.sessions[0].delegated_turns) == 1
    assert await records(store) == {
        "bobs-task": ("bob", None),
        "bobs-task via helper": (None, "bob"),
    }


async def test_a_two_level_chain_without_sessions_is_recorded_for_the_top_session(
    dev_env: WorkflowEnvironment, store: SqliteStore
) -> None:
    agents = {"lead": Hands(to="helper"), "helper": Hands(to="worker"), "worker": Hands()}
    await run(dev_env, store, agents, "alice", "task")
    assert await records(store) == {
        "task": ("alice", None),
        "task via helper": (None, "alice"),
        "task via helper via worker": (None, "alice"),
    }

    forgotten = await forget_session(store, "alice")

    assert len(forgotten.sessions[0].delegated_turns) == 2
    assert await records(store) == {}


async def test_a_delegate_with_its_own_session_is_not_marked_and_its_delegates_are_its(
    dev_env: WorkflowEnvironment, store: SqliteStore
) -> None:
    agents = {
        "lead": Hands(to="helper", session="helpers-own"),
        "helper": Hands(to="worker"),
        "worker": Hands(),
    }
    await run(dev_env, store, agents, "alice", "task")

    assert await records(store) == {
        "task": ("alice", None),
        "task via helper": ("helpers-own", None),
        "task via helper via worker": (None, "helpers-own"),
    }


async def test_a_delegation_a_sessionless_turn_waits_on_is_recorded_for_the_session_above(
    dev_env: WorkflowEnvironment, store: SqliteStore
) -> None:
    # The helper (no session, no state reader) waits on the worker: the activity starts it.
    helper = ScriptedProvider(
        [tool_call_response(delegate_call("worker", "worker-task")), text_response("handed on")]
    )
    worker = ScriptedProvider([text_response("worked")])
    agents: dict[str, Turn] = {
        "lead": Hands(to="helper"),
        "helper": agent(helper),
        "worker": agent(worker),
    }
    await run(dev_env, store, agents, "alice", "task")
    assert await records(store) == {
        "task": ("alice", None),
        "task via helper": (None, "alice"),
        "worker-task": (None, "alice"),
    }

    await forget_session(store, "alice")

    assert await records(store) == {}


async def test_requests_from_before_the_field_are_read_as_delegated_for_no_session() -> None:
    task = TurnInput(message="task", trigger="user")
    start = WorkflowInput(
        agent="helper", input=task, chain=Chain.root("helper", max_depth=3), policy=TurnPolicy()
    )
    turn = TurnRequest(workflow_id="w", agent="helper", input=task, route="helper")
    for message in (start, turn):
        older = message.model_dump(mode="json", exclude={"delegated_for"})
        assert "delegated_for" not in older
        assert type(message).model_validate(older).delegated_for is None


async def test_the_delegate_of_a_turn_that_failed_is_recorded_for_its_session_and_forgotten(
    dev_env: WorkflowEnvironment, store: SqliteStore
) -> None:
    # The lead's model delegates, then its provider fails for good: the dispatch fails.
    lead = ScriptedProvider(
        [tool_call_response(delegate_call("helper", "helper-task")), NonRetryableError("down")]
    )
    helper = ScriptedProvider([text_response("helped")])
    agents: dict[str, Turn] = {"lead": agent(lead), "helper": agent(helper)}
    with pytest.raises(OrchError, match="down"):
        await run(dev_env, store, agents, "alice", "task")
    kept = await records(store)
    assert kept["helper-task"] == (None, "alice")

    await forget_session(store, "alice")

    assert await records(store) == {}


class Passing:
    """A hand-written turn that hands the conversation off to `finisher`."""

    async def execute(self, input: TurnInput) -> TurnOutput:
        return TurnOutput(
            message="over to you",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=[HandoffEffect(agent="finisher", state=None)],
        )


async def test_a_handoff_in_a_delegated_run_is_recorded_for_the_same_session(
    dev_env: WorkflowEnvironment, store: SqliteStore
) -> None:
    agents: dict[str, Turn] = {"lead": Hands(to="helper"), "helper": Passing(), "finisher": Hands()}
    await run(dev_env, store, agents, "alice", "task")
    summaries = await store.turn_summaries(limit=100)
    by_agent = {
        record.agent: (record.session, record.delegated_for)
        for summary in summaries
        if (record := await store.turn_record(summary.turn_id)) is not None
    }
    assert by_agent == {
        "lead": ("alice", None),
        "helper": (None, "alice"),
        "finisher": (None, "alice"),
    }

    await forget_session(store, "alice")

    assert await records(store) == {}
