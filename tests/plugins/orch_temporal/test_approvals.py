"""Turns paused for approval: the workflow waits for `decide`, checks it, resumes once."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_turn import (
    AWAITING_APPROVAL,
    DECISIONS_KEY,
    Decision,
    DuplicateDecisionError,
    InvalidEditedInputError,
    MalformedDecisionsError,
    MissingDecisionError,
    NotAwaitingApprovalError,
    UnknownDecisionError,
    pending_approvals,
    resume_input,
)

from .agents import cleaner_agent
from .conftest import FAST, hosting, noting_calls

pytestmark = pytest.mark.asyncio(loop_scope="session")

TIDY = TurnInput(message="Tidy up", trigger="user", session="s-9")


def runs(tool_log: Path) -> list[str]:
    return tool_log.read_text().splitlines() if tool_log.exists() else []


async def test_a_paused_turn_returns_to_its_caller_and_resumes_once_when_approved(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    async with hosting(env, {"cleaner": cleaner_agent(log, state=store)}, store) as orchestrator:
        # Real time: skipping would run the approval timeout out at once.
        with env.auto_time_skipping_disabled():
            paused = await orchestrator.run("cleaner", TIDY, workflow_id="approve-1")
            [waiting] = await orchestrator.awaiting("approve-1")
            ran_before = runs(log)
            done = await orchestrator.decide("approve-1", [Decision.approve("c2")])
            with pytest.raises(NotAwaitingApprovalError, match="'approve-1' has finished"):
                await orchestrator.decide("approve-1", [Decision.approve("c2")])
            assert await orchestrator.awaiting("approve-1") == []
    assert paused.output.exit_reason == AWAITING_APPROVAL
    assert [(c.id, c.name, c.input) for c in pending_approvals(paused.output)] == [
        ("c2", "delete_file", {"path": "old.log"})
    ]
    assert (waiting.workflow_id, waiting.agent, waiting.session, waiting.pause) == (
        "approve-1",
        "cleaner",
        "s-9",
        1,
    )
    assert [c.id for c in waiting.calls] == ["c2"]
    assert ran_before == ["read notes.txt"]
    assert done.output.exit_reason == "complete"
    assert done.output.message.as_text() == "contents of notes.txt; deleted old.log"
    assert done.route == ("cleaner", "cleaner")
    assert runs(log) == ["read notes.txt", "delete old.log"]
    history = await store.read(SessionScope(id="s-9"), HISTORY_KEY)
    assert isinstance(history, list)
    roles = [m["role"] for m in history if isinstance(m, dict)]
    assert roles == ["user", "assistant", "user", "user", "assistant"]


async def test_decisions_that_do_not_fit_the_pause_are_refused_and_change_nothing(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    async with hosting(env, {"cleaner": cleaner_agent(log, state=store)}, store) as orchestrator:
        with env.auto_time_skipping_disabled():
            await orchestrator.run("cleaner", TIDY, workflow_id="approve-2")
            with pytest.raises(MissingDecisionError, match="without a decision: c2"):
                await orchestrator.decide("approve-2", [])
            with pytest.raises(UnknownDecisionError, match=r"not pending .*: c7; pending: c2"):
                await orchestrator.decide(
                    "approve-2", [Decision.approve("c2"), Decision.deny("c7", "no")]
                )
            with pytest.raises(DuplicateDecisionError, match="more than once: c2"):
                await orchestrator.decide(
                    "approve-2", [Decision.approve("c2"), Decision.deny("c2", "no")]
                )
            with pytest.raises(NotAwaitingApprovalError, match=r"for pause 2 .* waits on pause 1"):
                await orchestrator.decide("approve-2", [Decision.approve("c2")], pause=2)
            [still] = await orchestrator.awaiting("approve-2")
            edited = Decision.approve("c2", {"path": "other.log"})
            done = await orchestrator.decide("approve-2", [edited], pause=1)
    assert [c.id for c in still.calls] == ["c2"]
    assert done.output.message.as_text() == "contents of notes.txt; deleted other.log"
    assert runs(log) == ["read notes.txt", "delete other.log"]


async def test_a_denied_call_does_not_run_and_the_model_reads_the_reason(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    async with hosting(env, {"cleaner": cleaner_agent(log, state=store)}, store) as orchestrator:
        with env.auto_time_skipping_disabled():
            await orchestrator.run("cleaner", TIDY, workflow_id="approve-3")
            done = await orchestrator.decide("approve-3", [Decision.deny("c2", "keep the logs")])
    assert done.output.message.as_text() == (
        "contents of notes.txt; Denied by a person: keep the logs"
    )
    assert runs(log) == ["read notes.txt"]


async def test_nobody_deciding_within_the_approval_timeout_denies_the_pending_calls(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    policy = FAST.model_copy(update={"approval_timeout": 3_600_000})
    agents = {"cleaner": cleaner_agent(log, state=store)}
    async with hosting(env, agents, store, policy=policy) as orchestrator:
        with env.auto_time_skipping_disabled():
            paused = await orchestrator.run("cleaner", TIDY, workflow_id="approve-4")
            [waiting] = await orchestrator.awaiting("approve-4")
            now = await env.get_current_time()
            await env.sleep(timedelta(hours=1, seconds=1))  # the server's clock, not ours
            done = await orchestrator.result("approve-4")
    assert paused.output.exit_reason == AWAITING_APPROVAL
    assert timedelta(minutes=59) < waiting.deadline - now <= timedelta(hours=1)
    assert done.output.message.as_text() == (
        "contents of notes.txt; Denied by a person: approval timed out"
    )
    assert done.route == ("cleaner", "cleaner")
    assert runs(log) == ["read notes.txt"]


async def test_a_turn_without_a_session_ends_its_workflow_at_the_pause(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    untracked = TurnInput(message="Tidy up", trigger="user")  # no history to resume from
    async with hosting(env, {"cleaner": cleaner_agent(log, state=store)}, store) as orchestrator:
        with env.auto_time_skipping_disabled():
            paused = await orchestrator.run("cleaner", untracked, workflow_id="approve-5")
            ended = await orchestrator.result("approve-5")
            with pytest.raises(NotAwaitingApprovalError, match="'approve-5' has finished"):
                await orchestrator.decide("approve-5", [Decision.approve("c2")])
    assert paused.output.exit_reason == AWAITING_APPROVAL
    assert ended == paused


async def test_dispatching_a_resume_input_decides_the_workflow_waiting_on_its_session(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    garbled = TurnInput(message="", trigger="user", session="s-9", metadata={DECISIONS_KEY: "y"})
    async with hosting(env, {"cleaner": cleaner_agent(log, state=store)}, store) as orchestrator:
        with env.auto_time_skipping_disabled():
            await orchestrator.run("cleaner", TIDY, workflow_id="approve-6")
            with pytest.raises(MalformedDecisionsError, match="must be a list of decisions"):
                await orchestrator.dispatch("cleaner", garbled)
            approve = resume_input("s-9", [Decision.approve("c2")])
            done = await orchestrator.dispatch("cleaner", approve)
            left = await orchestrator.awaiting("approve-6")
            ended = await orchestrator.result("approve-6")
    assert done == ended.output
    assert done.message.as_text() == "contents of notes.txt; deleted old.log"
    assert left == []
    assert runs(log) == ["read notes.txt", "delete old.log"]


async def test_a_caller_cancelled_while_its_decisions_wait_for_a_worker_is_cancelled(
    dev_env: WorkflowEnvironment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    async with hosting(
        dev_env, {"cleaner": cleaner_agent(log, state=store)}, store
    ) as orchestrator:
        await orchestrator.run("cleaner", TIDY, workflow_id="decide-unconfirmed")
    # Its worker is gone: the decisions wait for the next one.
    sent = noting_calls(monkeypatch, "execute_update")
    deciding = asyncio.ensure_future(
        orchestrator.decide("decide-unconfirmed", [Decision.approve("c2")])
    )
    await sent.wait()
    deciding.cancel()

    # Its cancellation, not the SDK's error, saying the decisions may still be applied.
    with pytest.raises(asyncio.CancelledError) as raised:
        await deciding
    assert raised.value.__notes__ == [
        "the decisions may have reached workflow 'decide-unconfirmed', and a worker taking "
        "them resumes its turn"
    ]


async def test_an_edited_input_the_tool_refuses_is_refused_and_its_calls_wait_for_decisions_again(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    async with hosting(env, {"cleaner": cleaner_agent(log, state=store)}, store) as orchestrator:
        with env.auto_time_skipping_disabled():
            await orchestrator.run("cleaner", TIDY, workflow_id="approve-edit")
            [first] = await orchestrator.awaiting("approve-edit")
            edited = [Decision.approve("c2", input={"path": 5})]
            with pytest.raises(InvalidEditedInputError, match="c2") as refused:
                await orchestrator.decide("approve-edit", edited)
            [again] = await orchestrator.awaiting("approve-edit")
            ran_before = runs(log)
            done = await orchestrator.decide("approve-edit", [Decision.approve("c2")])

    # Nothing ran on the refused decisions; the same call waited, saying why.
    assert ran_before == ["read notes.txt"]
    assert (again.pause, [c.id for c in again.calls]) == (2, ["c2"])
    assert again.deadline == first.deadline  # asking again gives no more time
    assert again.refused == str(refused.value)
    assert again.refused_type == "InvalidEditedInputError"
    assert done.output.message.as_text() == "contents of notes.txt; deleted old.log"
    assert runs(log) == ["read notes.txt", "delete old.log"]


async def test_a_decision_given_always_reaches_the_worker_and_decides_later_turns_calls(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    async with hosting(env, {"cleaner": cleaner_agent(log, state=store)}, store) as orchestrator:
        with env.auto_time_skipping_disabled():
            await orchestrator.run("cleaner", TIDY, workflow_id="always-1")
            always = [Decision.approve("c2", always=True)]
            await orchestrator.decide("always-1", always)
            later = await orchestrator.run("cleaner", TIDY, workflow_id="always-2")

    # The second turn's delete ran without asking: the first's decision stands.
    assert later.output.exit_reason == "complete"
    assert runs(log) == ["read notes.txt", "delete old.log"] * 2


async def test_the_inputs_own_stop_tool_holds_in_the_resumed_part(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    stopping = TIDY.model_copy(
        update={"metadata": {"neuron_turn": {"stop_at_tools": ["delete_file"]}}}
    )
    async with hosting(env, {"cleaner": cleaner_agent(log, state=store)}, store) as orchestrator:
        with env.auto_time_skipping_disabled():
            await orchestrator.run("cleaner", stopping, workflow_id="approve-options")
            done = await orchestrator.decide("approve-options", [Decision.approve("c2")])
    # The kept option, not the model: the approved stop tool's result is the answer.
    assert done.output.exit_reason == "complete"
    assert done.output.message.as_text() == "deleted old.log"
    assert runs(log) == ["read notes.txt", "delete old.log"]
