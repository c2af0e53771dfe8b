"""Replay: recorded histories still replay on today's workflow code.

`histories/*.json` were recorded by this module; a change to `AgentWorkflow`
that would break running workflows fails here. Re-record them (after adding
`workflow.patched` branches where old histories must keep working) with
`NEURON_RECORD_HISTORIES=1 pytest tests/plugins/orch_temporal/test_replay.py`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer
from temporalio.workflow import NondeterminismError

from layer0 import DispatchFailed, EffectPolicy, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_temporal import DATA_CONVERTER, AgentWorkflow, TemporalOrchestrator
from neuron_orch_temporal.approvals import Settled
from neuron_orch_temporal.names import SETTLED_UPDATE
from neuron_turn import (
    Decision,
    InvalidEditedInputError,
    MissingDecisionError,
    NeuronTurn,
    NeuronTurnConfig,
    ToolUsePart,
    UnknownDecisionError,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._changed_workflow import ChangedWorkflow
from .agents import (
    WaiterTurn,
    cleaner_agent,
    handoff_agents,
    planner_agents,
    rate_limited_agent,
    sender_agent,
    stalling_agent,
    twice_pausing_cleaner,
)
from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

HISTORIES = Path(__file__).with_name("histories")
FRESH_REPLAY = Path(__file__).with_name("_fresh_replay.py")
RECORD = os.environ.get("NEURON_RECORD_HISTORIES") == "1"


def task(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user", session="replay")


async def planner(orchestrator: TemporalOrchestrator) -> str:
    return (await orchestrator.run("planner", task("replay"), workflow_id="rp-planner")).workflow_id


async def handoff(orchestrator: TemporalOrchestrator) -> str:
    return (await orchestrator.run("triage", task("refund"), workflow_id="rp-handoff")).workflow_id


async def waiter(orchestrator: TemporalOrchestrator) -> str:
    await orchestrator.start("waiter", task("wait"), workflow_id="rp-waiter")
    await orchestrator.dispatch("sender", task("signal rp-waiter"))
    return (await orchestrator.result("rp-waiter")).workflow_id


async def approval(orchestrator: TemporalOrchestrator) -> str:
    await orchestrator.run("cleaner", task("tidy"), workflow_id="rp-approval")
    # Refused (no history event), then taken: the update's validator and handler.
    with pytest.raises(MissingDecisionError):
        await orchestrator.decide("rp-approval", [])
    return (await orchestrator.decide("rp-approval", [Decision.approve("c2")])).workflow_id


async def refused(orchestrator: TemporalOrchestrator) -> str:
    # An edited input its tool refuses: the resume refuses it, and the call waits again.
    await orchestrator.run("cleaner", task("tidy"), workflow_id="rp-refused")
    with pytest.raises(InvalidEditedInputError):
        await orchestrator.decide("rp-refused", [Decision.approve("c2", {"path": 5})])
    return (await orchestrator.decide("rp-refused", [Decision.approve("c2")])).workflow_id


async def relisted(orchestrator: TemporalOrchestrator) -> str:
    # The delegated agent decided on its own pauses again: the parent's listing is stale,
    # its resume refuses the decisions, and it asks for the calls waiting now.
    paused = await orchestrator.run("boss", task("tidy"), workflow_id="rp-relisted")
    [child] = paused.delegations
    await orchestrator.decide(child.workflow_id, [Decision.approve("c1")])
    with pytest.raises(UnknownDecisionError):
        await orchestrator.decide("rp-relisted", [Decision.approve("d1/c1")])
    return (await orchestrator.decide("rp-relisted", [Decision.approve("d1/c2")])).workflow_id


async def relisted_at_once(orchestrator: TemporalOrchestrator) -> str:
    # The same, the parent told at once: it lists the calls waiting now before any decide.
    paused = await orchestrator.run("boss", task("tidy"), workflow_id="rp-relisted-at-once")
    [child] = paused.delegations
    await orchestrator.decide(child.workflow_id, [Decision.approve("c1")])
    handle = (await orchestrator.client()).get_workflow_handle(paused.workflow_id)
    await handle.execute_update(SETTLED_UPDATE, 1, result_type=Settled)
    decisions = [Decision.approve("d1/c2")]
    return (await orchestrator.decide("rp-relisted-at-once", decisions)).workflow_id


def boss(store: InMemoryStore) -> NeuronTurn:
    """Delegates to `twice` (call `d1`), then answers."""
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("d1", "delegate", {"agent": "twice", "message": "go"})),
            text_response("done"),
        ]
    )
    config = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy.everything())
    return NeuronTurn(model, state=store, config=config)


async def continued(orchestrator: TemporalOrchestrator) -> str:
    # Rate limited once after its tool ran: the turn's first part is kept, then continued.
    result = await orchestrator.run("reader", task("read"), workflow_id="rp-continued")
    return result.workflow_id


STALLED = asyncio.Event()


async def cancelled(orchestrator: TemporalOrchestrator) -> str:
    # Cancelled through Temporal while its second tool runs: its part is kept, then it ends.
    STALLED.clear()
    running = asyncio.ensure_future(
        orchestrator.dispatch("staller", task("read"), workflow_id="rp-cancelled")
    )
    await STALLED.wait()
    await (await orchestrator.client()).get_workflow_handle("rp-cancelled").cancel()
    with pytest.raises(DispatchFailed, match="rp-cancelled was cancelled"):
        await running
    return "rp-cancelled"


SCENARIOS: dict[str, Callable[[TemporalOrchestrator], Awaitable[str]]] = {
    "approval": approval,
    "cancelled": cancelled,
    "continued": continued,
    "planner": planner,
    "handoff": handoff,
    "refused": refused,
    "relisted": relisted,
    "relisted-at-once": relisted_at_once,
    "waiter": waiter,
}


async def history_of(env: WorkflowEnvironment, name: str) -> WorkflowHistory:
    store = InMemoryStore()
    agents = {
        **planner_agents(store),
        **handoff_agents(store),
        "waiter": WaiterTurn(),
        "sender": sender_agent(),
        "cleaner": cleaner_agent(Path(os.devnull), state=store),
        "reader": rate_limited_agent(Path(os.devnull), state=store),
        "staller": stalling_agent(Path(os.devnull), state=store, stalled=STALLED),
        "boss": boss(store),
        "twice": twice_pausing_cleaner(Path(os.devnull), store),
    }
    async with hosting(env, agents, store) as orchestrator:
        with env.auto_time_skipping_disabled():
            workflow_id = await SCENARIOS[name](orchestrator)
    return await env.client.get_workflow_handle(workflow_id).fetch_history()


STORED = sorted([*SCENARIOS, "cancelled-before-patch"])
"""The stored histories: each scenario's, and ones recorded by earlier code
(`cancelled-before-patch`: a workflow cancelled mid-turn, which failed then)."""


def stored(name: str) -> WorkflowHistory:
    path = HISTORIES / f"{name}.json"
    return WorkflowHistory.from_json(f"rp-{name}", path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_a_fresh_history_replays_deterministically(
    env: WorkflowEnvironment, name: str
) -> None:
    history = await history_of(env, name)
    if RECORD:
        (HISTORIES / f"{name}.json").write_text(history.to_json(), encoding="utf-8")
    replayer = Replayer(workflows=[AgentWorkflow], data_converter=DATA_CONVERTER)
    await replayer.replay_workflow(history)


@pytest.mark.parametrize("name", STORED)
async def test_a_stored_history_replays_on_todays_code(name: str) -> None:
    replayer = Replayer(workflows=[AgentWorkflow], data_converter=DATA_CONVERTER)
    result = await replayer.replay_workflow(stored(name))
    assert result.replay_failure is None


async def test_a_change_of_effect_handling_is_caught_by_replay() -> None:
    replayer = Replayer(workflows=[ChangedWorkflow], data_converter=DATA_CONVERTER)
    with pytest.raises(NondeterminismError):
        await replayer.replay_workflow(stored("planner"))


async def test_stored_histories_replay_in_a_fresh_process() -> None:
    """A restarted worker's first use of each layer0 model is inside the workflow sandbox."""
    names = STORED
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(FRESH_REPLAY),
        *(f"rp-{name}={HISTORIES / f'{name}.json'}" for name in names),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    report = out.decode()
    assert process.returncode == 0, report + err.decode()[-2000:]
    assert report.split() == [word for name in names for word in ("ok", f"rp-{name}")]
