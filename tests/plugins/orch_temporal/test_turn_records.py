"""On Temporal the worker's store keeps each turn's record, written by the turn's activity."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    EffectPolicy,
    EffectRefused,
    ModelCallEntry,
    ToolCallEntry,
    TurnInput,
    TurnRecord,
    WriteMemoryEffect,
    take_timeline,
)
from neuron_env_sandbox import SandboxEnvironment, TurnRecipe
from neuron_orch_local import Placement
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .agents import DeclaringTurn
from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_a_turn_run_by_a_worker_is_recorded_in_its_store_with_its_timeline(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    provider = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "add", {"a": 17, "b": 25})), text_response("42")]
    )
    async with SqliteStore(tmp_path / "state.db") as store:
        turn = NeuronTurn(provider, tools=ToolRegistry([add]), state=store)
        async with hosting(env, {"a": turn}, store) as orchestrator:
            output = await orchestrator.dispatch(
                "a", TurnInput(message="17 + 25?", trigger="user", session="s")
            )
        [summary] = await store.turn_summaries(session="s")
        record = await store.turn_record(summary.turn_id)
    assert take_timeline(output) == (output, None)  # the timeline stays with the worker
    assert record is not None and record.status == "accepted"
    assert record.output is not None and record.output.message == output.message
    assert [entry.kind for entry in record.timeline] == ["model_call", "tool_call", "model_call"]
    tool_call = record.timeline[1]
    assert isinstance(tool_call, ToolCallEntry) and tool_call.output == "42"


async def test_a_refused_turn_is_recorded_as_refused_by_the_worker(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    grab = ("write_memory", {"scope": "global", "key": "k", "value": 1})
    async with SqliteStore(tmp_path / "state.db") as store:
        # A hand-written turn declares a global write the worker's policy for it does not
        # grant (a model calling for it is told so as it calls, and its turn goes on).
        turn = DeclaringTurn(lambda text: [grab])
        async with hosting(env, {"a": turn}, store, default_policy=EffectPolicy()) as orch:
            with pytest.raises(EffectRefused) as caught:
                await orch.dispatch("a", TurnInput(message="go", trigger="user", session="s"))
        [summary] = await store.turn_summaries()
        record = await store.turn_record(summary.turn_id)
        assert await store.read("global", "k") is None
    assert "outside its effect policy" in str(caught.value)
    assert record is not None and record.status == "refused"
    assert record.error is not None and record.error.startswith(EffectRefused.__name__)
    assert record.output is not None
    assert any(isinstance(e, WriteMemoryEffect) for e in record.output.effects)


SANDBOXED = TurnRecipe(
    model="scripted:test",
    tools=("read_env",),
    plugins=("tests.plugins.env_sandbox.fixture_tools",),
    effect_tools=False,
)


async def show(state: Path, *args: str) -> str:
    """Run `neuron-turn show ARGS --state STATE` in its own process; return its stdout."""
    env = {**os.environ, "NEURON_LOAD_PLUGINS": "state-sqlite"}
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "neuron_turn", "show", *args, "--state", str(state)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        async with asyncio.timeout(30):
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_a_sandboxed_turn_run_by_a_worker_is_recorded_and_neuron_turn_show_reads_it_back(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    call = ToolUsePart("c1", "read_env", {"name": "HOME"})
    provider = ScriptedProvider([tool_call_response(call), text_response("home is /workspace")])
    state = tmp_path / "state.db"
    async with SqliteStore(state) as store:
        sandbox = SandboxEnvironment(SANDBOXED, provider=provider, state=store)
        placed = {"coder": Placement(sandbox)}
        async with hosting(dev_env, {}, store, environments=placed) as orchestrator:
            result = await orchestrator.run(
                "coder", TurnInput(message="where is home?", trigger="user", session="s-box")
            )
        [summary] = await store.turn_summaries(session="s-box")
        record = await store.turn_record(summary.turn_id)
    shown = TurnRecord.model_validate_json(await show(state, summary.turn_id, "--json"))
    text = await show(state, summary.turn_id)

    assert record is not None and record.status == "accepted"
    assert (record.agent, record.workflow_id) == ("coder", result.workflow_id)
    assert record.output == result.output  # the caller's output: the timeline stayed behind
    first, tool_call, last = record.timeline
    assert isinstance(first, ModelCallEntry) and first.stop_reason == "tool_use"
    assert isinstance(tool_call, ToolCallEntry) and tool_call.name == "read_env"
    assert tool_call.output == "/workspace"  # the tool ran inside the sandbox
    assert isinstance(last, ModelCallEntry) and last.call == 2
    assert shown == record
    assert text.startswith(f"turn {summary.turn_id}\n")
    assert "session s-box  agent coder" in text
    assert 'tool read_env({"name":"HOME"}) -> /workspace' in text
