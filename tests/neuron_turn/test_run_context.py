"""Tools asking for a `RunContext` get the caller's deps, the session, the deadline, progress."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest
from moneyed import Money
from pydantic import JsonValue

from neuron_hooks import HookRegistry, ToolProgress
from neuron_tool import RunContext, RunUsage, tool
from neuron_turn import (
    NeuronTurnConfig,
    ToolResult,
    ToolResultPart,
    ToolStart,
    TurnDone,
    TurnEvent,
    UsageLimits,
    event_from_json,
    event_json,
)
from neuron_turn.loop import _tool_round

from .support import add, answer, ask, build, call, calls, dollars


@dataclass
class Shop:
    """A caller's dependency: what a tool needs and the model must never see."""

    owner: str
    stock: dict[str, int]


@tool
async def in_stock(context: RunContext[Shop], item: str) -> dict[str, JsonValue]:
    """How many of an item the shop has.

    Args:
        context: The run.
        item: The item.
    """
    await context.progress("counting", fraction=0.5, data={"item": item})
    remaining = context.remaining()
    return {
        "count": context.deps.stock.get(item, 0),
        "owner": context.deps.owner,
        "session": context.session,
        "call": context.tool_call_id,
        "message": None if context.input is None else context.input.message.as_text(),
        "deadline_left": None if remaining is None else remaining > 0,
    }


def result(provider: object, request: int = 1) -> ToolResultPart:
    requests = provider.requests  # type: ignore[attr-defined]
    [part] = [p for p in requests[request].messages[-1].content if isinstance(p, ToolResultPart)]
    assert isinstance(part, ToolResultPart)
    return part


async def test_a_tool_receives_the_callers_dependency_and_the_session() -> None:
    script = [calls(call("c1", "in_stock", item="pears")), answer("3 pears")]
    turn, provider = build(script, tools=[in_stock])
    turn.deps = Shop("Ann", {"pears": 3})
    output = await turn.execute(ask("pears?", session="s-9"))
    assert output.message.as_text() == "3 pears"
    part = result(provider)
    assert not part.is_error, part.content
    assert part.content == (
        '{"count":3,"owner":"Ann","session":"s-9","call":"c1","message":"pears?",'
        '"deadline_left":null}'
    )
    # The model is offered `item` only: the context never appears in its schema.
    [schema] = [t.input_schema for t in provider.requests[0].tools if t.name == "in_stock"]
    assert list(schema["properties"]) == ["item"]  # type: ignore[call-overload]


async def test_deps_given_to_execute_replace_the_turns_and_the_deadline_is_known() -> None:
    script = [calls(call("c1", "in_stock", item="figs")), answer("ok")]
    config = NeuronTurnConfig(model="m", max_duration=60_000)
    turn, provider = build(script, tools=[in_stock], config=config)
    turn.deps = Shop("Ann", {})
    await turn.execute(ask("figs?"), deps=Shop("Bo", {"figs": 9}))
    content = result(provider).content
    assert '"count":9,"owner":"Bo"' in content and '"deadline_left":true' in content


async def test_deps_of_the_wrong_type_are_a_tool_error_and_the_turn_goes_on() -> None:
    script = [calls(call("c1", "in_stock", item="figs")), answer("sorry")]
    turn, provider = build(script, tools=[in_stock])
    output = await turn.execute(ask(), deps="not a shop")
    assert output.message.as_text() == "sorry"
    part = result(provider)
    assert part.is_error and "asks for RunContext[Shop]" in part.content
    assert "deps are a str" in part.content and "not a shop" not in part.content


async def test_progress_events_appear_in_the_stream_between_start_and_result() -> None:
    script = [calls(call("c1", "in_stock", item="pears")), answer("3")]
    turn, _ = build(script, tools=[in_stock])
    events: list[TurnEvent] = [e async for e in turn.stream(ask(), deps=Shop("Ann", {"pears": 3}))]
    kinds = [
        type(e).__name__ for e in events if isinstance(e, ToolStart | ToolProgress | ToolResult)
    ]
    assert kinds == ["ToolStart", "ToolProgress", "ToolResult"]
    [progress] = [e for e in events if isinstance(e, ToolProgress)]
    assert progress == ToolProgress("c1", "in_stock", "counting", 0.5, {"item": "pears"})
    assert event_json(progress) == {
        "type": "tool_progress",
        "id": "c1",
        "name": "in_stock",
        "message": "counting",
        "fraction": 0.5,
        "data": {"item": "pears"},
    }
    assert event_from_json(event_json(progress)) == progress
    assert isinstance(events[-1], TurnDone)


class _Watcher:
    """An observer of progress only."""

    def __init__(self) -> None:
        self.seen: list[ToolProgress] = []

    async def on_progress(self, event: ToolProgress) -> None:
        self.seen.append(event)


class _Broken:
    async def on_progress(self, event: ToolProgress) -> None:
        raise RuntimeError("observer bug")


async def test_progress_reaches_observers_and_a_broken_one_is_logged_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hooks = HookRegistry()
    broken, watcher = _Broken(), _Watcher()
    hooks.add_progress_observer(broken, name="broken")
    hooks.add_progress_observer(watcher)
    script = [calls(call("c1", "in_stock", item="pears")), answer("3")]
    turn, _ = build(script, tools=[in_stock], hooks=hooks)
    with caplog.at_level(logging.ERROR, logger="neuron_hooks"):
        output = await turn.execute(ask(), deps=Shop("Ann", {"pears": 3}))
    assert output.message.as_text() == "3"
    assert watcher.seen == [ToolProgress("c1", "in_stock", "counting", 0.5, {"item": "pears"})]
    assert "progress observer 'broken' raised" in caplog.text


async def test_no_context_is_built_for_tools_that_do_not_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(**_: object) -> None:
        raise AssertionError("a RunContext was built for a tool that did not ask")

    monkeypatch.setattr(_tool_round, "RunContext", refuse)
    script = [calls(call("c1", "add", a=1, b=2)), answer("3")]
    turn, provider = build(script, tools=[add, in_stock])
    await turn.execute(ask())
    assert result(provider).content == "3"


@tool
def count_slowly(context: RunContext[Shop], item: str, steps: int) -> int:
    """Count an item in several steps, reporting each (a plain `def`: it runs in a thread).

    Args:
        context: The run.
        item: The item.
        steps: How many steps.
    """
    for step in range(steps):
        context.report(f"step {step + 1}", fraction=(step + 1) / steps, data={"item": item})
    return context.deps.stock.get(item, 0)


async def test_a_plain_def_tool_reports_progress_from_its_thread_in_order() -> None:
    script = [calls(call("c1", "count_slowly", item="pears", steps=3)), answer("3")]
    watcher = _Watcher()
    hooks = HookRegistry()
    hooks.add_progress_observer(watcher, name="watcher")
    turn, _ = build(script, tools=[count_slowly], hooks=hooks)
    events = [e async for e in turn.stream(ask(), deps=Shop("Ann", {"pears": 3}))]
    shown = [
        e.message if isinstance(e, ToolProgress) else type(e).__name__
        for e in events
        if isinstance(e, ToolStart | ToolProgress | ToolResult)
    ]
    assert shown == ["ToolStart", "step 1", "step 2", "step 3", "ToolResult"]
    assert [(e.message, e.fraction) for e in watcher.seen][-1] == ("step 3", 1.0)
    [done] = [e for e in events if isinstance(e, ToolResult)]
    assert (done.content, done.is_error) == ("3", False)


@tool
async def reports_wrongly(context: RunContext[Shop]) -> str:
    """An async tool calling the thread-side report."""
    context.report("this blocks the loop")
    return "unreachable"


async def test_report_on_the_event_loops_thread_is_a_clear_tool_error() -> None:
    script = [calls(call("c1", "reports_wrongly")), answer("ok")]
    turn, provider = build(script, tools=[reports_wrongly])
    events = [e async for e in turn.stream(ask(), deps=Shop("Ann", {}))]
    assert isinstance(events[-1], TurnDone)
    part = result(provider)
    assert part.is_error
    assert "an `async def` tool uses `await context.progress(...)`" in part.content


async def test_report_without_a_listener_is_dropped_and_the_tool_runs() -> None:
    script = [calls(call("c1", "count_slowly", item="figs", steps=2)), answer("0")]
    turn, provider = build(script, tools=[count_slowly])
    output = await turn.execute(ask(), deps=Shop("Ann", {}))
    assert output.message.as_text() == "0"
    assert (result(provider).content, result(provider).is_error) == ("0", False)


@tool
async def so_far(context: RunContext) -> dict[str, JsonValue]:
    """Say how far the run has got."""
    usage = context.usage
    return {
        "step": context.step,
        "tokens": [usage.input_tokens, usage.output_tokens],
        "cost": str(usage.cost.amount),
        "tool_calls": usage.tool_calls,
    }


async def test_a_tool_sees_the_model_calls_made_and_the_usage_so_far() -> None:
    script = [
        calls(call("c1", "so_far"), cost="0.01"),
        calls(call("c2", "so_far"), cost="0.02"),
        answer("ok"),
    ]
    turn, provider = build(script, tools=[so_far])

    await turn.execute(ask())

    assert result(provider, 1).content == (
        '{"step":1,"tokens":[10,5],"cost":"0.01","tool_calls":0}'
    )
    assert result(provider, 2).content == (
        '{"step":2,"tokens":[20,10],"cost":"0.03","tool_calls":1}'
    )


SEEN_USAGE: list[RunUsage] = []


@tool
async def summarise(context: RunContext[None], text: str) -> str:
    """Summarise with a model of the tool's own (pretend): its call is charged to the turn."""
    SEEN_USAGE.append(context.usage)
    context.charge(dollars("0.25"), input_tokens=100, output_tokens=20)
    return text[:10]


@tool
def summarise_in_a_thread(context: RunContext[None], text: str) -> str:
    """The same from a plain `def` tool, which runs in a worker thread."""
    context.charge(dollars("0.25"), input_tokens=100, output_tokens=20)
    return text[:10]


async def test_a_tools_own_model_call_is_counted_in_the_turns_tokens_cost_and_usage() -> None:
    SEEN_USAGE.clear()
    script = [
        calls(call("c1", "summarise", text="a long text"), cost="0.01"),
        calls(call("c2", "summarise_in_a_thread", text="another"), cost="0.01"),
        calls(call("c3", "summarise", text="and more"), cost="0.01"),
        answer("done", cost="0.01"),
    ]
    turn, _ = build(script, tools=[summarise, summarise_in_a_thread])

    output = await turn.execute(ask("summarise"))

    assert output.exit_reason == "complete"
    # Four model calls at 10 in / 5 out and 0.01 each, three charges at 100 / 20 and 0.25.
    assert (output.metadata.tokens_in, output.metadata.tokens_out) == (340, 80)
    assert output.metadata.cost == dollars("0.79")
    first, third = SEEN_USAGE
    assert (first.input_tokens, first.cost) == (10, dollars("0.01"))
    assert (third.input_tokens, third.cost) == (10 * 3 + 200, dollars("0.53"))


async def test_a_charge_past_max_cost_stops_the_turn_after_its_tool_round() -> None:
    script = [calls(call("c1", "summarise", text="a long text"), cost="0.01"), answer("never")]
    config = NeuronTurnConfig(model="test-model", max_cost=dollars("0.10"))
    turn, provider = build(script, tools=[summarise], config=config)

    output = await turn.execute(ask("summarise"))

    assert output.exit_reason == "budget_exhausted"
    assert len(provider.requests) == 1  # no model call after the charge went past it
    assert output.metadata.cost == dollars("0.26")


async def test_a_charge_past_a_token_limit_stops_the_turn_after_its_tool_round() -> None:
    script = [calls(call("c1", "summarise", text="a long text")), answer("never")]
    limits = UsageLimits(input_tokens=50)
    config = NeuronTurnConfig(model="test-model", usage_limits=limits)
    turn, provider = build(script, tools=[summarise], config=config)

    output = await turn.execute(ask("summarise"))

    assert output.exit_reason == "budget_exhausted" and len(provider.requests) == 1


@pytest.mark.parametrize(
    ("cost", "counts", "error", "why"),
    [
        ("0.1", {}, TypeError, "cost is a moneyed.Money"),
        (Money("0.1", "EUR"), {}, ValueError, "must be in USD"),
        (Money("-1", "USD"), {}, ValueError, "not negative"),
        (None, {"input_tokens": -1}, ValueError, "input_tokens must not be negative"),
        (None, {"output_tokens": 1.5}, TypeError, "output_tokens is an int"),
    ],
)
def test_a_charge_that_is_no_cost_or_count_is_refused_naming_it(
    cost: object, counts: dict[str, object], error: type[Exception], why: str
) -> None:
    counted: list[object] = []
    context: RunContext[None] = RunContext(deps=None, charger=lambda *a: counted.append(a))
    with pytest.raises(error, match=why):
        context.charge(cost, **counts)  # type: ignore[arg-type]
    assert counted == []


def test_a_charge_in_a_context_built_by_hand_counts_nowhere() -> None:
    RunContext(deps=None).charge(dollars("1"), input_tokens=1, output_tokens=1)
