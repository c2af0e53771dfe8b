"""A delegated agent that pauses for approval, on Temporal's dev server.

An answered delegation (a `NeuronTurn`'s `delegate` call) of a turn that
reads its session's history gives the child a session of its own: the
child's workflow waits at its pause, the parent pauses on the child's held
calls, and `decide` on the parent resumes both. A turn without a state
reader could not resume, so its child gets a task without a session, whose
workflow ends at the pause, and the parent's model reads why. A delegation
declared with a session (a hand-written turn's `delegate` effect) waits in
its own child workflow, which `decide` resumes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    DelegateEffect,
    EffectPolicy,
    LogEffect,
    Turn,
    TurnInput,
    TurnMetadata,
    TurnOutput,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import DELEGATION_LOG
from neuron_orch_temporal.approvals import Settled
from neuron_orch_temporal.names import SETTLED_UPDATE
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    Decision,
    NeuronTurn,
    NeuronTurnConfig,
    NotAwaitingApprovalError,
    ToolResultPart,
    ToolUsePart,
    UnknownDecisionError,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .agents import cleaner_agent, file_tools
from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

EVERYTHING = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy.everything())


def runs(tool_log: Path) -> list[str]:
    return tool_log.read_text().splitlines() if tool_log.exists() else []


def boss_and_cleaner(
    tool_log: Path, store: InMemoryStore, answer: str, *, reads_history: bool = True
) -> tuple[ScriptedProvider, dict[str, Turn]]:
    """The boss's model, delegating "Tidy up" to the cleaner (call `d1`), then answering
    `answer`; and the two agents, each reading its history from `store` if `reads_history`."""
    boss = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("d1", "delegate", {"agent": "cleaner", "message": "Tidy up"})
            ),
            text_response(answer),
        ]
    )
    state = store if reads_history else None
    agents: dict[str, Turn] = {
        "boss": NeuronTurn(boss, state=state, config=EVERYTHING),
        "cleaner": cleaner_agent(tool_log, state=state),
    }
    return boss, agents


async def test_an_answered_delegate_that_pauses_ends_at_the_pause_and_the_parents_model_reads_why(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    parent, agents = boss_and_cleaner(log, store, "the cleaner needs a person", reads_history=False)
    async with hosting(dev_env, agents, store) as orchestrator:
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
    assert ran_before == ["read notes.txt"]
    assert done.output.message.as_text() == "tidied"
    [delegation] = parent.delegations
    assert (delegation.agent, delegation.workflow_id) == ("cleaner", child)
    assert delegation.output == done.output
    assert runs(log) == ["read notes.txt", "delete old.log"]


async def test_a_delegated_agent_pausing_pauses_its_parent_whose_decide_resumes_it_once(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    parent, agents = boss_and_cleaner(log, store, "tidied")
    go = TurnInput(message="go", trigger="user", session="p1")
    async with hosting(dev_env, agents, store) as orchestrator:
        paused = await orchestrator.run("boss", go, workflow_id="boss-1")
        [waiting] = await orchestrator.awaiting("boss-1")
        ran_while_paused = runs(log)
        with pytest.raises(UnknownDecisionError, match="pending: d1/c2"):
            await orchestrator.decide("boss-1", [Decision.approve("c2")])
        done = await orchestrator.decide("boss-1", [Decision.approve("d1/c2")])

    assert paused.output.exit_reason == AWAITING_APPROVAL
    assert [(c.id, c.name, c.agent) for c in waiting.calls] == [("d1/c2", "delete_file", "cleaner")]
    assert ran_while_paused == ["read notes.txt"]
    assert done.output.message.as_text() == "tidied"
    assert len(parent.requests) == 2
    [answer] = [p for p in parent.requests[1].messages[-1].content if isinstance(p, ToolResultPart)]
    assert (answer.tool_use_id, answer.content, answer.is_error) == (
        "d1",
        "contents of notes.txt; deleted old.log",
        False,
    )
    assert runs(log) == ["read notes.txt", "delete old.log"]
    # The cleaner's one workflow paused, took the decision, and ended.
    assert [d.output.exit_reason for d in done.delegations] == [AWAITING_APPROVAL, "complete"]
    assert len({d.workflow_id for d in done.delegations}) == 1


async def test_a_delegated_agent_decided_on_its_own_answers_its_parents_resume_with_its_end(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    parent, agents = boss_and_cleaner(log, store, "tidied")
    go = TurnInput(message="go", trigger="user", session="p2")
    async with hosting(dev_env, agents, store) as orchestrator:
        paused = await orchestrator.run("boss", go, workflow_id="boss-2")
        [child] = paused.delegations
        # Someone decides the cleaner's own workflow, which waits too.
        alone = await orchestrator.decide(child.workflow_id, [Decision.approve("c2")])
        done = await orchestrator.decide("boss-2", [Decision.approve("d1/c2")])

    assert alone.output.exit_reason == "complete"
    # The boss's resume found the cleaner finished: its answer, nothing run twice.
    assert done.output.message.as_text() == "tidied"
    [answer] = [p for p in parent.requests[1].messages[-1].content if isinstance(p, ToolResultPart)]
    assert answer.content == "contents of notes.txt; deleted old.log"
    assert runs(log) == ["read notes.txt", "delete old.log"]
