"""`TemporalOrchestrator.stream`: progress events reach the caller, the output unchanged."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import EffectPolicy, SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_temporal import _progress as progress_module
from neuron_tool import RunContext, tool
from neuron_turn import (
    ModelCallDone,
    NeuronTurn,
    NeuronTurnConfig,
    TokenUsage,
    ToolProgress,
    ToolResult,
)
from neuron_turn.testing import FunctionProvider

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


@tool
async def count(ctx: RunContext[None], upto: int) -> str:
    """Count, reporting each number."""
    for number in range(1, upto + 1):
        await ctx.progress(f"counted {number}", fraction=number / upto, data={"n": number})
    return f"counted to {upto}"


def counting_agents(upto: int) -> dict[str, object]:
    respond = two_step(lambda t: [("count", {"upto": upto})], lambda t: "done")
    config = NeuronTurnConfig(model="fn", effect_policy=EffectPolicy.everything())
    return {"main": NeuronTurn(FunctionProvider(respond), tools=[count], config=config)}


async def test_a_tools_progress_reports_reach_a_streamed_dispatch_between_its_start_and_result(
    dev_env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    async with hosting(dev_env, counting_agents(3), store) as orchestrator:  # type: ignore[arg-type]
        async with orchestrator.stream("main", task("count"), poll_interval=0.05) as events:
            progress = [item.event async for item in events]

    kinds = [type(e).__name__ for e in progress]
    assert kinds[2:7] == ["ToolStart", "ToolProgress", "ToolProgress", "ToolProgress", "ToolResult"]
    reports = [e for e in progress if isinstance(e, ToolProgress)]
    assert [(r.name, r.message, r.data) for r in reports] == [
        ("count", f"counted {n}", {"n": n}) for n in (1, 2, 3)
    ]
    assert reports[-1].fraction == 1.0 and events.result.output.message.as_text() == "done"


async def test_a_tool_reporting_past_the_cap_sends_only_the_first_reports_and_its_turn_goes_on(
    dev_env: WorkflowEnvironment, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(progress_module, "MAX_TOOL_REPORTS", 4)
    store = InMemoryStore()
    async with hosting(dev_env, counting_agents(10), store) as orchestrator:  # type: ignore[arg-type]
        async with orchestrator.stream("main", task("count"), poll_interval=0.05) as events:
            progress = [item.event async for item in events]

    reports = [e.data for e in progress if isinstance(e, ToolProgress)]
    assert reports == [{"n": n} for n in (1, 2, 3, 4)]
    assert type(progress[-1]).__name__ == "ModelCallDone"
    assert events.result.output.message.as_text() == "done"
    assert "reported progress 4 times; later reports are not sent" in caplog.text
