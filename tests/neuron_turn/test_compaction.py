"""The loop's context step: calibrated measure, limits, compaction, lifecycle events."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import pytest

from layer0 import (
    BudgetAction,
    BudgetWarning,
    CompactionComplete,
    ContextPressure,
    CostIncurred,
    PreCompactionFlush,
    SessionScope,
    TurnConfig,
    usd,
)
from layer0.testing import InMemoryStore
from neuron_hooks import HookRegistry, LifecycleEvent, lifecycle_events
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    Lifecycle,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    SlidingWindow,
    TextPart,
    TokenUsage,
    ToolUsePart,
)
from neuron_turn.loop._convert import history_from_json, history_to_json
from neuron_turn.loop.context import CompactionBudget
from neuron_turn.loop.tokens import TokenMeter, estimate_tokens
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response

from .support import appended, ask


class Recorder:
    """A lifecycle observer that keeps what it sees."""

    def __init__(self) -> None:
        self.events: list[LifecycleEvent] = []

    async def on_lifecycle(self, event: LifecycleEvent) -> None:
        self.events.append(event)


def true_tokens(request: ProviderRequest) -> int:
    """The 'real tokenizer' of the test model: 3 characters a token, unlike the estimate's 4."""
    chars = len(request.system or "")
    for schema in request.tools:
        chars += len(schema.name) + len(schema.description) + len(json.dumps(schema.input_schema))
    for message in request.messages:
        for part in message.content:
            if isinstance(part, TextPart):
                chars += len(part.text)
            elif isinstance(part, ToolUsePart):
                chars += len(part.name) + len(str(part.input))
            else:
                chars += len(getattr(part, "content", ""))
    return math.ceil(chars / 3)


@tool
async def fetch(n: int) -> str:
    """Return a large page."""
    return f"page {n} " + "x" * 4_000


def session_model(steps: int, seen: list[ProviderRequest]) -> FunctionProvider:
    """Calls `fetch` `steps` times, then answers; reports its true input tokens and a cost."""

    def respond(request: ProviderRequest) -> ProviderResponse:
        seen.append(request)
        usage = TokenUsage(true_tokens(request), 5)
        n = len(seen)
        if n > steps:
            return text_response("done", usage=usage, cost=usd("0.01"))
        part = ToolUsePart(f"c{n}", "fetch", {"n": n})
        return tool_call_response(part, usage=usage, cost=usd("0.01"))

    return FunctionProvider(respond)


async def test_sliding_window_brings_a_large_context_under_the_limit_that_triggered_it() -> None:
    # The bug of issue 20: 12 messages of 10k tokens each, and compact() kept all 12.
    messages = [ProviderMessage("user", [TextPart("y" * 40_000)]) for _ in range(12)]
    budget = CompactionBudget(
        limit=75_000,
        tokens=estimate_tokens(messages),
        count=estimate_tokens,
        provider=FunctionProvider(lambda r: text_response("-")),
        model="m",
    )
    strategy = SlidingWindow()
    assert strategy.should_compact(messages, 100_000, used=120_000)
    kept = await strategy.compact(messages, budget=budget)
    assert estimate_tokens(kept) <= 75_000
    assert kept[-1] is messages[-1]


def test_the_meter_learns_a_models_ratio_from_reports_and_bounds_it() -> None:
    meter = TokenMeter()
    assert meter.ratio("m") == 1.0
    meter.calibrate("m", estimated=300, reported=400)
    assert meter.ratio("m") == pytest.approx(4 / 3)
    meter.calibrate("m", estimated=0, reported=50)  # nothing to learn from
    meter.calibrate("m", estimated=100, reported=0)
    assert meter.ratio("m") == pytest.approx(4 / 3)
    meter.calibrate("odd", estimated=1, reported=1_000)
    assert meter.ratio("odd") == 4.0
    assert meter.ratio("other") == 1.0


async def test_a_long_session_never_sends_more_than_the_limit_by_the_models_own_count() -> None:
    seen: list[ProviderRequest] = []
    limit = 20_000
    turn = NeuronTurn(
        session_model(60, seen),
        tools=ToolRegistry([fetch]),
        context=SlidingWindow(max_messages=10_000),
        config=NeuronTurnConfig(model="m", max_turns=100, context_limit=limit),
    )
    output = await turn.execute(ask("read the pages"))
    assert output.exit_reason == "complete"
    assert len(seen) == 61
    # The estimate says 4 chars a token, the model 3: only calibration keeps this true.
    assert max(true_tokens(r) for r in seen) <= limit
    assert turn.meter.ratio("m") == pytest.approx(4 / 3, rel=0.05)


async def test_the_limit_comes_from_the_providers_context_window_less_the_answer() -> None:
    class Windowed(FunctionProvider):
        def context_window(self, model: str) -> int | None:
            return 30_000 if model == "m" else None

    seen: list[ProviderRequest] = []
    provider = session_model(40, seen)
    windowed = Windowed(provider.fn)
    turn = NeuronTurn(
        windowed,
        tools=ToolRegistry([fetch]),
        context=SlidingWindow(max_messages=10_000),
        config=NeuronTurnConfig(model="m", max_turns=100, max_tokens=10_000),
    )
    output = await turn.execute(ask("read"))
    assert output.exit_reason == "complete"
    assert max(true_tokens(r) for r in seen) <= 20_000
    assert max(true_tokens(r) for r in seen) > 10_000


async def test_events_reach_an_observer_in_order_and_are_declared_as_log_effects() -> None:
    seen: list[ProviderRequest] = []
    hooks = HookRegistry()
    recorder = Recorder()
    hooks.add_lifecycle_observer(recorder, name="recorder")
    turn = NeuronTurn(
        session_model(12, seen),
        tools=ToolRegistry([fetch]),
        hooks=hooks,
        context=SlidingWindow(max_messages=10_000),
        config=NeuronTurnConfig(
            model="m", max_turns=100, context_limit=10_000, record_costs=True, agent="reader"
        ),
    )
    output = await turn.execute(ask("read", config=TurnConfig(max_cost="0.15")))
    events = recorder.events
    kinds = [event.type for event in events]
    assert kinds.count("cost_incurred") == 13
    first_flush = kinds.index("pre_compaction_flush")
    assert "context_pressure" in kinds[:first_flush]
    assert kinds[first_flush + 1] == "compaction_complete"
    pressure = next(e for e in events if isinstance(e, ContextPressure))
    assert pressure.agent == "reader"
    assert pressure.fill_percent >= 50
    assert pressure.tokens_used + pressure.tokens_available == 10_000
    flush = next(e for e in events if isinstance(e, PreCompactionFlush))
    assert flush.scope.model_dump() != SessionScope(id="x").model_dump()
    complete = next(e for e in events if isinstance(e, CompactionComplete))
    assert complete.strategy == "SlidingWindow"
    assert complete.tokens_freed > 0
    costs = [e for e in events if isinstance(e, CostIncurred)]
    assert costs[-1].cumulative == usd("0.13")
    (warning,) = [e for e in events if isinstance(e, BudgetWarning)]
    assert warning.spent == usd("0.12")  # the first call at or past 80% of 0.15
    assert warning.limit == usd("0.15")
    # The same events, in the same order, are recorded with the turn's output.
    assert lifecycle_events(output.effects) == events


async def test_a_streamed_turn_yields_each_lifecycle_event_the_observers_see_in_order() -> None:
    recorder = Recorder()
    hooks = HookRegistry()
    hooks.add_lifecycle_observer(recorder)
    turn = NeuronTurn(
        session_model(12, []),
        tools=ToolRegistry([fetch]),
        hooks=hooks,
        context=SlidingWindow(max_messages=10_000),
        config=NeuronTurnConfig(model="m", max_turns=100, context_limit=10_000),
    )
    streamed = [e.event async for e in turn.stream(ask("read")) if isinstance(e, Lifecycle)]
    assert {e.type for e in streamed} >= {
        "context_pressure",
        "pre_compaction_flush",
        "compaction_complete",
        "cost_incurred",
    }
    assert streamed == recorder.events


async def test_a_turn_its_cost_budget_stops_ends_with_a_halt_budget_action() -> None:
    recorder = Recorder()
    hooks = HookRegistry()
    hooks.add_lifecycle_observer(recorder)
    turn = NeuronTurn(
        session_model(12, []),
        tools=ToolRegistry([fetch]),
        hooks=hooks,
        config=NeuronTurnConfig(model="m", max_turns=100),
    )
    output = await turn.execute(ask("read", session="budget", config=TurnConfig(max_cost="0.03")))
    assert output.exit_reason == "budget_exhausted"
    halt = BudgetAction(workflow="budget", action="halt_workflow")
    assert recorder.events[-1] == halt
    assert [e.type for e in recorder.events].count("budget_action") == 1
    assert lifecycle_events(output.effects)[-1] == halt


async def test_cost_events_are_not_declared_unless_asked() -> None:
    seen: list[ProviderRequest] = []
    recorder = Recorder()
    hooks = HookRegistry()
    hooks.add_lifecycle_observer(recorder)
    turn = NeuronTurn(
        session_model(2, seen),
        tools=ToolRegistry([fetch]),
        hooks=hooks,
        config=NeuronTurnConfig(model="m"),
    )
    output = await turn.execute(ask("read"))
    assert [e.type for e in recorder.events] == ["cost_incurred"] * 3
    assert lifecycle_events(output.effects) == []


async def test_a_pinned_input_survives_compaction_and_the_history_keeps_it_pinned() -> None:
    seen: list[ProviderRequest] = []
    store = InMemoryStore()
    turn = NeuronTurn(
        session_model(30, seen),
        tools=ToolRegistry([fetch]),
        context=SlidingWindow(max_messages=10_000),
        state=store,
        config=NeuronTurnConfig(model="m", max_turns=100, context_limit=8_000),
    )
    pinned = ask("REMEMBER: the code is 4417", session="s", neuron_turn={"pin": True})
    output = await turn.execute(pinned)
    assert all(
        any(isinstance(p, TextPart) and "4417" in p.text for m in r.messages for p in m.content)
        for r in seen
    )
    # The history keeps every message of the turn, compacted or not, and the pin.
    restored = history_from_json(appended(output).messages)
    assert len(restored) == 1 + 2 * 30 + 1
    assert restored[0].pinned
    assert not any(m.pinned for m in restored[1:])


def test_stored_history_writes_the_pin_only_on_pinned_messages() -> None:
    messages = [
        ProviderMessage("user", [TextPart("a")], pinned=True),
        ProviderMessage("assistant", [TextPart("b")]),
    ]
    stored = history_to_json(messages)
    assert stored == [
        {"role": "user", "content": "a", "pinned": True},
        {"role": "assistant", "content": "b"},
    ]
    assert history_from_json(stored) == messages


class _Legacy:
    """A strategy written against the first contract: no `used`, no `budget`."""

    def __init__(self) -> None:
        self.calls = 0

    def token_estimate(self, messages: Sequence[ProviderMessage]) -> int:
        return estimate_tokens(messages)

    def should_compact(self, messages: Sequence[ProviderMessage], limit: int) -> bool:
        return estimate_tokens(messages) > limit

    async def compact(self, messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
        self.calls += 1
        return [messages[0], *messages[-2:]]


async def test_a_strategy_of_the_first_contract_still_works() -> None:
    seen: list[ProviderRequest] = []
    legacy = _Legacy()
    turn = NeuronTurn(
        session_model(20, seen),
        tools=ToolRegistry([fetch]),
        context=legacy,
        config=NeuronTurnConfig(model="m", max_turns=100, context_limit=10_000),
    )
    output = await turn.execute(ask("read"))
    assert output.exit_reason == "complete"
    assert legacy.calls > 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("context_limit", 0),
        ("compact_to", 0.0),
        ("compact_to", 1.5),
        ("budget_warning_at", 0.0),
        ("context_pressure_at", (0.5, 2.0)),
    ],
)
def test_bad_context_settings_are_refused_naming_the_setting(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        NeuronTurnConfig(**{field: value})  # type: ignore[arg-type]
