"""A worker runs an agent registered with a `Placement` in that environment."""

from __future__ import annotations

import os

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, SessionScope, TurnInput
from layer0.testing import EchoTurn, InMemoryStore
from neuron_env_sandbox import ProcessEnvironment, TurnRecipe
from neuron_orch_local import Placement
from neuron_orch_temporal import create_worker
from neuron_turn import ToolResultPart, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

RECIPE = TurnRecipe(
    model="scripted:test",
    tools=("pid",),
    plugins=("tests.plugins.orch_temporal.fixture_pid",),
    effect_tools=False,
)


async def test_an_agent_placed_in_the_process_environment_runs_in_a_child_process(
    dev_env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("call-1", "pid", {})), text_response("done")]
    )
    child = ProcessEnvironment(RECIPE, provider=model, state=store)
    placed = {"coder": Placement(child)}
    async with hosting(dev_env, {}, store, environments=placed) as orchestrator:
        output = await orchestrator.dispatch(
            "coder", TurnInput(message="which process?", trigger="user", session="s-pid")
        )
    assert output.message.as_text() == "done"
    (result,) = model.requests[1].messages[-1].content
    assert isinstance(result, ToolResultPart) and not result.is_error
    assert int(result.content) != os.getpid()  # the worker runs in this test's process
    history = await store.read(SessionScope(id="s-pid"), HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 4  # written here, by the workflow


async def test_an_environment_given_by_name_is_refused_with_how_to_build_one(
    dev_env: WorkflowEnvironment,
) -> None:
    with pytest.raises(TypeError, match=r"environments\['coder'\] is not a Placement: 'process'"):
        create_worker(
            dev_env.client,
            agents={},
            store=InMemoryStore(),
            environments={"coder": "process"},  # type: ignore[dict-item]
        )


async def test_an_agent_cannot_be_both_in_process_and_placed(dev_env: WorkflowEnvironment) -> None:
    child = ProcessEnvironment(RECIPE)
    with pytest.raises(ValueError, match="both `agents` and `environments`"):
        create_worker(
            dev_env.client,
            agents={"coder": EchoTurn()},
            store=InMemoryStore(),
            environments={"coder": Placement(child)},
        )
