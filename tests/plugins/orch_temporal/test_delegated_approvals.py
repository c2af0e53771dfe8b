"""A delegated agent that pauses for approval, on Temporal's dev server.

An answered delegation (a `NeuronTurn`'s `delegate` call) of a turn that has
a session and reads its history runs in a session of its own
(`neuron_turn.delegation_session`): the child's workflow waits for
decisions, and the parent pauses too, listing the child's held calls as
`<delegate call id>/<their id>`. The parent's `decide` resumes the parent,
whose resume hands the child its decisions. A parent that cannot find the
held call again (no state reader) gives the child no session: the child's
workflow ends at the pause, and the parent's model reads why. A delegation
declared with a session (a hand-written turn's `delegate` effect) waits in
its own child workflow, which `decide` resumes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import JsonValue
from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
)
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    HISTORY_KEY,
    DelegateEffect,
    EffectPolicy,
    LogEffect,
    RetryableError,
    Scope,
    SessionScope,
    Turn,
    TurnInput,
    TurnMetadata,
    TurnOutput,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import DELEGATION_LOG
from neuron_orch_temporal.approvals import DecideRequest, Settled
from neuron_orch_temporal.names import DECIDE_UPDATE, SETTLED_UPDATE
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    Decision,
    InvalidEditedInputError,
    NeuronTurn,
    NeuronTurnConfig,
    NotAwaitingApprovalError,
    ToolResultPart,
    ToolUsePart,
    UnknownDecisionError,
    delegation_session,
    pending_approvals,
    resume_input,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ..orch_local.test_answers import results_sent
from .agents import cleaner_agent, file_tools, twice_pausing_cleaner
from .conftest import FAST, hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

EVERYTHING = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy.everything())


def runs(tool_log: Path) -> list[str]:
    return tool_log.read_text().splitlines() if tool_log.exists() else []


async def test_an_answered_delegate_that_pauses_ends_at_the_pause_and_the_parents_model_reads_why(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    parent = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("d1", "delegate", {"agent": "cleaner", "message": "Tidy up"})
            ),
            text_response("the cleaner needs a person"),
        ]
    )
    # The boss does not read its history, so its resume could not find the held call.
    agents = {
        "boss": NeuronTurn(parent, config=EVERYTHING),
        "cleaner": cleaner_agent(log, state=store),
    }
    async with hosting(dev_env, agents, store) as orchestrator:
        # Bounded: a child given a session would wait for decisions.
        async with asyncio.timeout(60):
            result = await orchestrator.run(
                "boss", TurnInput(message="go", trigger="user", session="p1")
            )
        [record] = [e for e in result.output.effects if isinstance(e, LogEffect)]
        assert isinstance(record.data, dict) and isinstance(record.data[DELEGATION_LOG], dict)
        child = record.data[DELEGATION_LOG]["workflow_id"]
        assert isinstance(child, str)
        child_result = await orchestrator.result(child)
        waiting = await orchestrator.awaiting(child)
        with pytest.raises(NotAwaitingApprovalError, match="has finished"):
            await orchestrator.decide(child, [Decision.approve("c2")])

    # The parent did not wait: its delegate call was answered at the child's pause, once.
    assert len(parent.requests) == 2
    [answer] = [p for p in parent.requests[1].messages[-1].content if isinstance(p, ToolResultPart)]
    assert answer.tool_use_id == "d1" and answer.is_error
    assert answer.content == (
        "Agent 'cleaner' stopped before finishing: its calls "
        'delete_file({"path": "old.log"}) need a person\'s approval, which a delegated task '
        "cannot wait for, so they did not run"
    )
    assert result.output.message.as_text() == "the cleaner needs a person"
    assert record.data[DELEGATION_LOG]["exit_reason"] == json.dumps({"custom": "awaiting_approval"})
    # The child's task had no session, so its workflow ended at the pause with
    # nothing left to decide, and the held call never ran.
    assert child_result.output.exit_reason == AWAITING_APPROVAL
    assert waiting == []
    assert runs(log) == ["read notes.txt"]


class DeclaringParent:
    """Declares one delegation of a task with its own session, then answers."""

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Delegate "Tidy up" to the cleaner on session `task-1`."""
        task = TurnInput(message="Tidy up", trigger="task", session="task-1")
        return TurnOutput(
            message="delegated",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=[DelegateEffect(agent="cleaner", input=task)],
        )


def gated_cleaner(tool_log: Path, reached: asyncio.Event, state: InMemoryStore) -> NeuronTurn:
    """The cleaner of `agents.cleaner_agent`, setting `reached` when its free call runs."""

    provider = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("c1", "read_file", {"path": "notes.txt"}),
                ToolUsePart("c2", "delete_file", {"path": "old.log"}),
            ),
            text_response("tidied"),
        ]
    )
    config = NeuronTurnConfig(
        model="scripted",
        effect_policy=EffectPolicy.everything(),
        approval=ApprovalPolicy.of(["delete_*"]),
    )
    tools = file_tools(tool_log, on_read=reached.set)
    return NeuronTurn(provider, tools=tools, state=state, config=config)


async def test_a_declared_delegate_with_a_session_waits_for_decide_and_its_parent_gets_it_once(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, reached = tmp_path / "tools.log", InMemoryStore(), asyncio.Event()
    agents = {"boss": DeclaringParent(), "cleaner": gated_cleaner(log, reached, store)}
    async with hosting(dev_env, agents, store) as orchestrator:
        boss = await orchestrator.start("boss", TurnInput(message="go", trigger="user"))
        child = f"{boss}/t0/d0-cleaner"
        async with asyncio.timeout(30):  # fail, not hang, if the child never gets there
            await reached.wait()  # the child's workflow exists and its turn is pausing
        handle = dev_env.client.get_workflow_handle(child)
        settled = await handle.execute_update(SETTLED_UPDATE, 0, result_type=Settled)
        [waiting] = await orchestrator.awaiting(child)
        ran_before = runs(log)
        done = await orchestrator.decide(child, [Decision.approve("c2")])
        parent = await orchestrator.result(boss)
        with pytest.raises(NotAwaitingApprovalError, match="has finished"):
            await orchestrator.decide(child, [Decision.approve("c2")])

    assert settled.pause is not None and settled.pause.waiting.pause == 1
    assert (waiting.agent, waiting.session, [c.id for c in waiting.calls]) == (
        "cleaner",
        "task-1",
        ["c2"],
    )
    assert waiting.held_by is None  # its parent waits for its end, listing nothing
    assert ran_before == ["read notes.txt"]
    assert done.output.message.as_text() == "tidied"
    [delegation] = parent.delegations
    assert (delegation.agent, delegation.workflow_id) == ("cleaner", child)
    assert delegation.output == done.output
    assert runs(log) == ["read notes.txt", "delete old.log"]


TIDY_UP: dict[str, JsonValue] = {"agent": "cleaner", "message": "Tidy up"}
GO = TurnInput(message="go", trigger="user", session="p1")


class LosesItsFirstAttempt:
    """Runs the boss's turn; the first time, then fails as an attempt whose worker died would.

    Nothing of that attempt was kept (its delegation came in its first round of
    tools), so the next attempt runs the turn again whole.
    """

    def __init__(self, turn: NeuronTurn) -> None:
        self.turn, self.lost = turn, False

    async def execute(self, input: TurnInput) -> TurnOutput:
        output = await self.turn.execute(input)
        if not self.lost:
            self.lost = True
            raise RetryableError("the worker running this attempt was lost")
        return output


def held_ids(output: TurnOutput) -> list[tuple[str, str | None]]:
    return [(c.id, c.agent) for c in pending_approvals(output)]


def boss_and_cleaner(
    tmp_path: Path, *answers: str
) -> tuple[Path, InMemoryStore, ScriptedProvider, dict[str, Turn]]:
    """The boss, delegating "Tidy up" to the cleaner (call `d1`), then answering each of
    `answers`, and the cleaner: their tool log, their store, the boss's model, the agents."""
    log, store = tmp_path / "tools.log", InMemoryStore()
    boss = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("d1", "delegate", TIDY_UP)),
            *(text_response(answer) for answer in answers),
        ]
    )
    agents: dict[str, Turn] = {
        "boss": NeuronTurn(boss, state=store, config=EVERYTHING),
        "cleaner": cleaner_agent(log, state=store),
    }
    return log, store, boss, agents


async def test_a_delegated_agent_pausing_pauses_its_parent_whose_decide_resumes_both_once(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, boss, agents = boss_and_cleaner(tmp_path, "Tidied.")
    async with hosting(dev_env, agents, store) as orchestrator, asyncio.timeout(60):
        paused = await orchestrator.run("boss", GO)
        [waiting] = await orchestrator.awaiting(paused.workflow_id)
        [child] = paused.delegations
        [childs] = await orchestrator.awaiting(child.workflow_id)
        ran_while_paused, asked_while_paused = runs(log), len(boss.requests)
        done = await orchestrator.decide(paused.workflow_id, [Decision.approve("d1/c2")])

    assert paused.output.exit_reason == AWAITING_APPROVAL
    assert held_ids(paused.output) == [("d1/c2", "cleaner")]
    assert [(c.id, c.name, c.input) for c in waiting.calls] == [
        ("d1/c2", "delete_file", {"path": "old.log"})
    ]
    # The cleaner's free call ran; the boss's model waited with its call unanswered.
    assert ran_while_paused == ["read notes.txt"]
    assert asked_while_paused == 1
    # The cleaner waits in its own workflow; the boss's pause ends first, so a
    # decision sent by its deadline reaches the cleaner before it times out.
    assert [c.id for c in childs.calls] == ["c2"]
    assert childs.deadline >= waiting.deadline
    # Its pause says which listing holds its calls too, so a form can show them once.
    assert (childs.held_by, waiting.held_by) == (paused.workflow_id, None)
    assert done.output.message.as_text() == "Tidied."
    assert runs(log) == ["read notes.txt", "delete old.log"]
    assert results_sent(boss, 2) == [ToolResultPart("d1", "contents of notes.txt; deleted old.log")]
    # One workflow of the cleaner, in the session named for the call's place and task.
    assert {d.workflow_id for d in done.delegations} == {child.workflow_id}
    cleaners = await store.read(SessionScope(id=delegation_session("p1", 1, TIDY_UP)), HISTORY_KEY)
    assert isinstance(cleaners, list) and len(cleaners) == 5


async def test_a_lost_attempt_whose_delegate_paused_is_run_again_and_finds_the_same_agent(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    # The attempt run again asks the model again, which names its call anew.
    boss = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("d1", "delegate", TIDY_UP)),
            tool_call_response(ToolUsePart("d9", "delegate", TIDY_UP)),
            text_response("Tidied."),
        ]
    )
    agents = {
        "boss": LosesItsFirstAttempt(NeuronTurn(boss, state=store, config=EVERYTHING)),
        "cleaner": cleaner_agent(log, state=store),
    }
    async with hosting(dev_env, agents, store) as orchestrator, asyncio.timeout(60):
        paused = await orchestrator.run("boss", GO)
        ran_while_paused = runs(log)
        done = await orchestrator.decide(paused.workflow_id, [Decision.approve("d9/c2")])

    assert held_ids(paused.output) == [("d9/c2", "cleaner")]
    # The second attempt's delegation found the cleaner the first had started: it
    # ran once, and its pause is the one the boss's resume decided.
    assert ran_while_paused == ["read notes.txt"]
    assert runs(log) == ["read notes.txt", "delete old.log"]
    assert done.output.message.as_text() == "Tidied."
    assert len({d.workflow_id for d in done.delegations}) == 1


async def test_decisions_a_delegated_agent_refuses_are_refused_and_its_calls_wait_again(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, boss, agents = boss_and_cleaner(tmp_path, "Tidied.")
    async with hosting(dev_env, agents, store) as orchestrator, asyncio.timeout(60):
        paused = await orchestrator.run("boss", GO)
        with pytest.raises(UnknownDecisionError, match="d1/c9"):
            await orchestrator.decide(paused.workflow_id, [Decision.approve("d1/c9")])
        edited = [Decision.approve("d1/c2", input={"path": 5})]
        with pytest.raises(InvalidEditedInputError, match="refused the decisions"):
            await orchestrator.decide(paused.workflow_id, edited)
        ran_before, asked_before = runs(log), len(boss.requests)
        [again] = await orchestrator.awaiting(paused.workflow_id)
        done = await orchestrator.decide(paused.workflow_id, [Decision.approve("d1/c2")])

    # Checked against the cleaner's tool before anything ran; the boss waited again.
    assert (ran_before, asked_before) == (["read notes.txt"], 1)
    assert [(c.id, c.agent) for c in again.calls] == [("d1/c2", "cleaner")]
    assert done.output.message.as_text() == "Tidied."
    assert runs(log) == ["read notes.txt", "delete old.log"]


async def test_decisions_sent_again_under_the_same_key_are_answered_with_the_pause_they_decided(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, release = tmp_path / "tools.log", InMemoryStore(), asyncio.Event()
    cleaner = cleaner_agent(log, state=store, delete_after=release)
    decisions = (Decision.approve("c2"),)
    async with hosting(dev_env, {"cleaner": cleaner}, store) as orchestrator:
        async with asyncio.timeout(60):
            paused = await orchestrator.run(
                "cleaner", TurnInput(message="Tidy up", trigger="task", session="c-1")
            )
            handle = dev_env.client.get_workflow_handle(paused.workflow_id)
            first, again = [
                await handle.execute_update(
                    DECIDE_UPDATE, DecideRequest(decisions=decisions, key="p/t1"), result_type=int
                )
                for _ in range(2)
            ]
            with pytest.raises(WorkflowUpdateFailedError) as other:
                await handle.execute_update(
                    DECIDE_UPDATE, DecideRequest(decisions=decisions, key="p/t2"), result_type=int
                )
            release.set()
            done = await orchestrator.result(paused.workflow_id)

    assert (first, again) == (1, 1)
    assert isinstance(other.value.cause, ApplicationError)
    assert other.value.cause.type == "NotAwaitingApprovalError"
    assert done.output.exit_reason == "complete"
    assert runs(log) == ["read notes.txt", "delete old.log"]


async def test_a_delegated_agent_of_a_delegated_agent_pausing_pauses_all_three_and_resumes_them(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    boss = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("d1", "delegate", {"agent": "manager", "message": "Get it tidied"})
            ),
            text_response("Tidied."),
        ]
    )
    manager = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("m1", "delegate", TIDY_UP)),
            text_response("the cleaner tidied"),
        ]
    )
    agents = {
        "boss": NeuronTurn(boss, state=store, config=EVERYTHING),
        "manager": NeuronTurn(manager, state=store, config=EVERYTHING),
        "cleaner": cleaner_agent(log, state=store),
    }
    async with hosting(dev_env, agents, store) as orchestrator, asyncio.timeout(60):
        paused = await orchestrator.run("boss", GO)
        with pytest.raises(UnknownDecisionError, match="d1/m1/c9"):
            await orchestrator.decide(paused.workflow_id, [Decision.approve("d1/m1/c9")])
        done = await orchestrator.decide(paused.workflow_id, [Decision.approve("d1/m1/c2")])

    assert held_ids(paused.output) == [("d1/m1/c2", "cleaner")]
    assert runs(log) == ["read notes.txt", "delete old.log"]
    assert results_sent(manager, 2) == [
        ToolResultPart("m1", "contents of notes.txt; deleted old.log")
    ]
    assert results_sent(boss, 2) == [ToolResultPart("d1", "the cleaner tidied")]
    assert done.output.message.as_text() == "Tidied."


async def test_cancelling_a_paused_parent_cancels_the_delegated_agent_its_pause_holds(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, _, agents = boss_and_cleaner(tmp_path)
    async with hosting(dev_env, agents, store) as orchestrator, asyncio.timeout(60):
        paused = await orchestrator.run("boss", GO)
        [child] = paused.delegations
        cancelled = await orchestrator.cancel(paused.workflow_id)
        with pytest.raises(WorkflowFailureError):
            await dev_env.client.get_workflow_handle(child.workflow_id).result()
        described = await dev_env.client.get_workflow_handle(child.workflow_id).describe()

    assert cancelled is True
    assert child.held
    # Nobody could decide its calls any more: it stopped with its parent.
    assert described.status == WorkflowExecutionStatus.CANCELED
    assert runs(log) == ["read notes.txt"]


async def test_a_delegated_agent_decided_on_its_own_answers_its_parents_call_when_it_resumes(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, boss, agents = boss_and_cleaner(tmp_path, "Tidied.")
    async with hosting(dev_env, agents, store) as orchestrator, asyncio.timeout(60):
        paused = await orchestrator.run("boss", GO)
        [child] = paused.delegations
        [own] = await orchestrator.awaiting(child.workflow_id)
        alone = await orchestrator.decide(child.workflow_id, [Decision.approve("c2")])
        done = await orchestrator.decide(paused.workflow_id, [Decision.approve("d1/c2")])

    assert [c.id for c in own.calls] == ["c2"]
    assert alone.output.message.as_text() == "contents of notes.txt; deleted old.log"
    # The boss's resume ran nothing of the cleaner's again: its call got the last answer.
    assert runs(log) == ["read notes.txt", "delete old.log"]
    assert results_sent(boss, 2) == [ToolResultPart("d1", "contents of notes.txt; deleted old.log")]
    assert done.output.message.as_text() == "Tidied."


async def test_a_parent_resumed_in_another_workflow_resumes_its_delegated_agent_there(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, boss, agents = boss_and_cleaner(tmp_path, "Tidied.")
    async with hosting(dev_env, agents, store) as orchestrator, asyncio.timeout(60):
        paused = await orchestrator.run("boss", GO)
        # Its workflow ends as it waits (the cleaner's with it); the sessions stay paused.
        await orchestrator.cancel(paused.workflow_id)
        waiting = await orchestrator.awaiting(paused.workflow_id)
        done = await orchestrator.run("boss", resume_input("p1", [Decision.approve("d1/c2")]))

    assert waiting == []
    assert done.workflow_id != paused.workflow_id
    assert runs(log) == ["read notes.txt", "delete old.log"]
    assert results_sent(boss, 2) == [ToolResultPart("d1", "contents of notes.txt; deleted old.log")]
    assert done.output.message.as_text() == "Tidied."


async def test_a_parent_nobody_decides_in_time_denies_its_delegated_agents_calls_too(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, boss, agents = boss_and_cleaner(tmp_path, "The cleaner could not delete it.")
    policy = FAST.model_copy(update={"approval_timeout": 1_000})
    async with hosting(dev_env, agents, store, policy=policy) as orchestrator:
        async with asyncio.timeout(60):
            paused = await orchestrator.run("boss", GO)
            done = await orchestrator.result(paused.workflow_id)

    assert held_ids(paused.output) == [("d1/c2", "cleaner")]
    # Denied, by the boss's timeout or, moments later, by the cleaner's own: never run.
    assert runs(log) == ["read notes.txt"]
    [answer] = results_sent(boss, 2)
    assert answer.tool_use_id == "d1" and answer.content
    assert done.output.message.as_text() == "The cleaner could not delete it."


def twice_pausing_tidy_up(
    tmp_path: Path, *answers: str, store: InMemoryStore | None = None
) -> tuple[Path, InMemoryStore, dict[str, Turn]]:
    """The boss, delegating "Tidy up" (call `d1`) then answering each of `answers`, and the
    twice-pausing cleaner: their tool log, their store (`store`, or a new one), the agents."""
    log, store = tmp_path / "tools.log", store or InMemoryStore()
    boss = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("d1", "delegate", TIDY_UP)),
            *(text_response(answer) for answer in answers),
        ]
    )
    agents: dict[str, Turn] = {
        "boss": NeuronTurn(boss, state=store, config=EVERYTHING),
        "cleaner": twice_pausing_cleaner(log, store),
    }
    return log, store, agents


class HeldStore(InMemoryStore):
    """A store whose next read of a session's history, once `hold` names it, waits for
    `release`: a test decides what happens while a worker reads it."""

    def __init__(self) -> None:
        super().__init__()
        self.held: str | None = None
        self.reached, self.released = asyncio.Event(), asyncio.Event()

    def hold(self, session: str) -> None:
        self.held = session

    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        if key == HISTORY_KEY and scope == SessionScope(id=self.held or ""):
            self.held = None
            self.reached.set()
            await self.released.wait()
        return await super().read(scope, key)


async def test_a_delegated_agent_decided_on_its_own_that_pauses_again_is_listed_anew_by_its_parent(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, agents = twice_pausing_tidy_up(tmp_path, "Both gone.")
    async with hosting(dev_env, agents, store) as orchestrator, asyncio.timeout(60):
        paused = await orchestrator.run("boss", GO)
        [first] = await orchestrator.awaiting(paused.workflow_id)
        [child] = paused.delegations
        [childs] = await orchestrator.awaiting(child.workflow_id)
        # Decided on its own, the cleaner pauses again and tells the boss, which lists anew.
        await orchestrator.decide(child.workflow_id, [Decision.approve("c1")])
        boss = dev_env.client.get_workflow_handle(paused.workflow_id)
        settled = await boss.execute_update(SETTLED_UPDATE, first.pause, result_type=Settled)
        [now] = await orchestrator.awaiting(paused.workflow_id)
        with pytest.raises(UnknownDecisionError, match="pending: d1/c2"):
            await orchestrator.decide(paused.workflow_id, [Decision.approve("d1/c1")])
        done = await orchestrator.decide(paused.workflow_id, [Decision.approve("d1/c2")])

    assert childs.held_by == paused.workflow_id
    assert settled.pause is not None and settled.pause.waiting == now
    assert [(c.id, c.name, c.input, c.agent) for c in now.calls] == [
        ("d1/c2", "delete_file", {"path": "b.log"}, "cleaner")
    ]
    # A new listing, by the same deadline; nothing ran on the stale decisions.
    assert (now.pause, now.deadline, now.refused) == (first.pause + 1, first.deadline, None)
    assert done.output.message.as_text() == "Both gone."
    assert runs(log) == ["delete a.log", "delete b.log"]


async def test_decisions_taken_for_calls_a_delegated_agent_moved_past_ask_for_its_calls_now(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    store = HeldStore()
    log, _, agents = twice_pausing_tidy_up(tmp_path, "Both gone.", store=store)
    async with hosting(dev_env, agents, store) as orchestrator, asyncio.timeout(60):
        paused = await orchestrator.run("boss", GO)
        [first] = await orchestrator.awaiting(paused.workflow_id)
        [child] = paused.delegations
        # The boss's reading of the cleaner's calls now is held, so its listing stays stale
        # when decisions for it come: they are taken, then refused by the resume.
        store.hold("p1")
        await orchestrator.decide(child.workflow_id, [Decision.approve("c1")])
        await store.reached.wait()
        boss = dev_env.client.get_workflow_handle(paused.workflow_id)
        stale = DecideRequest(decisions=(Decision.approve("d1/c1"),))
        await boss.execute_update(DECIDE_UPDATE, stale, result_type=int)
        store.released.set()
        settled = await boss.execute_update(SETTLED_UPDATE, first.pause, result_type=Settled)
        ran_before = runs(log)
        done = await orchestrator.decide(paused.workflow_id, [Decision.approve("d1/c2")])

    assert settled.pause is not None
    again = settled.pause.waiting
    assert [(c.id, c.name, c.input, c.agent) for c in again.calls] == [
        ("d1/c2", "delete_file", {"path": "b.log"}, "cleaner")
    ]
    assert again.refused_type == "UnknownDecisionError"
    assert again.refused is not None and "pending: d1/c2" in again.refused
    assert again.deadline == first.deadline
    assert ran_before == ["delete a.log"]
    assert done.output.message.as_text() == "Both gone."
    assert runs(log) == ["delete a.log", "delete b.log"]


async def test_timed_out_denials_that_no_longer_fit_deny_the_calls_waiting_now_instead(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store, agents = twice_pausing_tidy_up(tmp_path, "Not all gone.")
    policy = FAST.model_copy(update={"approval_timeout": 1_000})
    async with hosting(dev_env, agents, store, policy=policy) as orchestrator:
        async with asyncio.timeout(60):
            paused = await orchestrator.run("boss", GO)
            [child] = paused.delegations
            # Decided on its own, the cleaner pauses again: the boss's listing is stale.
            again = await orchestrator.decide(child.workflow_id, [Decision.approve("c1")])
            done = await orchestrator.result(paused.workflow_id)

    assert held_ids(paused.output) == [("d1/c1", "cleaner")]
    assert [c.id for c in pending_approvals(again.output)] == ["c2"]
    # The boss's denials, made again for the call it waits on now (or the cleaner's
    # own, moments later), denied b.log: it never ran, and both agents answered.
    assert runs(log) == ["delete a.log"]
    assert done.output.message.as_text() == "Not all gone."
