"""A delegated agent that pauses for approval, on Temporal's dev server.

An answered delegation (a `NeuronTurn`'s `delegate` call) gives the child a
task without a session here (the worker's answerer cannot resume a child, so
it leaves out the session the loop gives it), and a pause without a session
cannot be resumed: the child's workflow ends at the pause, and the parent's
model reads why. A
delegation declared with a session (a hand-written turn's `delegate` effect)
waits in its own child workflow, which `decide` resumes.
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
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .agents import cleaner_agent, file_tools
from .conftest import hosting

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
    # The boss reads its history, so its delegation gets a session the worker leaves out.
    agents = {
        "boss": NeuronTurn(parent, state=store, config=EVERYTHING),
        "cleaner": cleaner_agent(log, state=store),
    }
    async with hosting(dev_env, agents, store) as orchestrator:
        # Bounded: a child given the session would wait for decisions, and the boss with it.
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
    assert ran_before == ["read notes.txt"]
    assert done.output.message.as_text() == "tidied"
    [delegation] = parent.delegations
    assert (delegation.agent, delegation.workflow_id) == ("cleaner", child)
    assert delegation.output == done.output
    assert runs(log) == ["read notes.txt", "delete old.log"]
