"""A turn's lifecycle events are recorded by the orchestrator with the turn, in order."""

from __future__ import annotations

import logging

import pytest

from layer0 import TurnInput, usd
from layer0.testing import InMemoryStore
from neuron_hooks import HookRegistry, LifecycleEvent, lifecycle_events
from neuron_orch_local import LocalOrchestrator
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    SlidingWindow,
    TokenUsage,
    ToolUsePart,
)
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response


@tool
async def fetch(n: int) -> str:
    """Return a large page."""
    return "x" * 8_000


def reader(steps: int) -> FunctionProvider:
    count = 0

    def respond(request: ProviderRequest) -> ProviderResponse:
        nonlocal count
        count += 1
        usage = TokenUsage(0, 5)  # no report: the loop uses its estimate
        if count > steps:
            return text_response("done", usage=usage, cost=usd("0.01"))
        return tool_call_response(
            ToolUsePart(f"c{count}", "fetch", {"n": count}), usage=usage, cost=usd("0.01")
        )

    return FunctionProvider(respond)


class Recorder:
    def __init__(self) -> None:
        self.events: list[LifecycleEvent] = []

    async def on_lifecycle(self, event: LifecycleEvent) -> None:
        self.events.append(event)


async def test_the_workflow_record_holds_the_events_the_observer_saw_in_order(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hooks = HookRegistry()
    recorder = Recorder()
    hooks.add_lifecycle_observer(recorder)
    store = InMemoryStore()
    turn = NeuronTurn(
        reader(6),
        tools=ToolRegistry([fetch]),
        hooks=hooks,
        context=SlidingWindow(),
        state=store,
        config=NeuronTurnConfig(
            model="m", context_limit=5_000, record_costs=True, max_cost=usd("0.08")
        ),
    )
    orchestrator = LocalOrchestrator({"reader": turn}, store)
    with caplog.at_level(logging.INFO, logger="neuron_orch_local"):
        result = await orchestrator.run(
            "reader", TurnInput(message="read", trigger="user", session="s")
        )
    record = orchestrator.workflow(result.workflow_id)
    assert record.output is not None
    recorded = lifecycle_events(record.output.effects)
    assert recorded == recorder.events
    kinds = [event.type for event in recorded]
    assert {"cost_incurred", "context_pressure", "pre_compaction_flush"} <= set(kinds)
    assert {"compaction_complete", "budget_warning"} <= set(kinds)
    logged = [r for r in caplog.records if r.name == "neuron_orch_local"]
    assert [r.getMessage() for r in logged] == [e.message for e in _logs(record.output.effects)]


def _logs(effects: object) -> list:  # type: ignore[type-arg]
    from layer0 import LogEffect

    return [e for e in effects if isinstance(e, LogEffect)]  # type: ignore[attr-defined]
