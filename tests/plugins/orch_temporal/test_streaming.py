"""`TemporalOrchestrator.stream`: progress events reach the caller, the output unchanged."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_turn import ModelCallDone, TokenUsage, ToolResult

from .agents import COST, agent, two_step
from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


def task(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user", session="s-stream")


def noting_agents(store: InMemoryStore) -> dict[str, object]:
    def note(text: str) -> list[tuple[str, dict[str, object]]]:
        return [("write_memory", {"scope": "session:s-stream", "key": "note", "value": text})]

    return {"main": agent(two_step(note, lambda t: f"noted: {t}"), state=store)}


async def test_a_streamed_dispatch_reports_each_model_and_tool_call(
    dev_env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    agents = noting_agents(store)
    async with hosting(dev_env, agents, store) as orchestrator:  # type: ignore[arg-type]
        async with orchestrator.stream("main", task("milk"), poll_interval=0.05) as events:
            progress = [item.event async for item in events]
        result = events.result
        plain = await orchestrator.run("main", task("milk"))
        plain_progress = await orchestrator.progress(plain.workflow_id)

    assert [type(e).__name__ for e in progress] == [
        "ModelCallStart",
        "ModelCallDone",
        "ToolStart",
        "ToolResult",
        "ModelCallStart",
        "ModelCallDone",
    ]
    done = progress[1]
    assert isinstance(done, ModelCallDone)
    assert (done.call, done.usage, done.cost) == (1, TokenUsage(10, 5), COST)
    tool = progress[3]
    assert isinstance(tool, ToolResult)
    assert (tool.name, tool.is_error) == ("write_memory", False)
    assert result.output.message.as_text() == "noted: milk"
    assert result.output.message == plain.output.message
    assert result.output.exit_reason == plain.output.exit_reason
    assert await store.read(SessionScope(id="s-stream"), "note") == "milk"
    assert plain_progress == []  # `run` asks for none
