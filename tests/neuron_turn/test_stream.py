"""`NeuronTurn.stream`: events in order, the same output as `execute`, clean cancellation."""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any

import pytest

from layer0 import (
    BudgetWarning,
    CustomEffect,
    Halt,
    HookContext,
    HookPoint,
    LogEffect,
    ModelError,
    ObserverHalt,
    RetryableError,
    TurnConfig,
    TurnOutput,
    usd,
)
from neuron_hooks import FunctionHook, HookRegistry
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    EffectDeclared,
    EventStream,
    HookHalted,
    Lifecycle,
    LimitReached,
    ModelCallDone,
    ModelCallStart,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderConnectionError,
    ProviderRequest,
    ProviderResponse,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    TokenUsage,
    ToolCallDelta,
    ToolCallStart,
    ToolResult,
    ToolStart,
    TurnDone,
    TurnEvent,
    close_cancelled,
    event_from_json,
    event_json,
)
from neuron_turn.testing import ScriptedProvider

from .support import answer, ask, build, call, calls


def _script() -> list[ProviderResponse]:
    return [
        calls(call("c1", "add", a=17, b=23), usage=TokenUsage(100, 20)),
        answer("17 plus 23 is 40.", usage=TokenUsage(130, 9)),
    ]


def _turn(provider: Any, **config: Any) -> NeuronTurn:
    from .support import add, echo

    return NeuronTurn(
        provider,
        tools=ToolRegistry([add, echo]),
        config=NeuronTurnConfig(model="test-model", **config),
    )


async def _collect(turn: NeuronTurn, message: str = "hi", **kwargs: Any) -> list[TurnEvent]:
    return [event async for event in turn.stream(ask(message, **kwargs))]


def _timeless(output: TurnOutput) -> dict[str, Any]:
    """The output's JSON without wall-clock durations, the one thing two runs cannot share."""
    data = output.model_dump(mode="json")
    data["metadata"]["duration"] = 0
    for record in data["metadata"]["tools_called"]:
        record["duration"] = 0
    for effect in data["effects"]:
        if effect["type"] == "custom" and effect["effect_type"] == "append_history":
            effect["data"]["turn_id"] = ""  # a fresh id per turn, by design
    return data


async def test_events_come_in_the_order_the_turn_happens() -> None:
    turn = _turn(ScriptedProvider(_script(), chunk_size=5))

    events = await _collect(turn)

    kinds = [type(event).__name__ for event in events]
    assert kinds == [
        "ModelCallStart",
        "ToolCallStart",
        "ToolCallDelta",
        "ToolCallDelta",
        "ToolCallDelta",
        "ModelCallDone",
        "Lifecycle",  # CostIncurred
        "ToolStart",
        "ToolResult",
        "ModelCallStart",
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "ModelCallDone",
        "Lifecycle",
        "TurnDone",
    ]
    arguments = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    assert json.loads(arguments) == {"a": 17, "b": 23}
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "17 plus 23 is 40."
    assert events[1] == ToolCallStart("c1", "add")
    assert events[7] == ToolStart("c1", "add", {"a": 17, "b": 23})


async def test_each_model_call_reports_its_own_usage_and_cost() -> None:
    script = [
        calls(call("c1", "add", a=1, b=2), usage=TokenUsage(100, 20), cost="0.001"),
        answer("3", usage=TokenUsage(130, 9), cost="0.002"),
    ]
    events = await _collect(_turn(ScriptedProvider(script)))

    done = [e for e in events if isinstance(e, ModelCallDone)]
    assert [(d.call, d.usage, d.cost, d.stop_reason) for d in done] == [
        (1, TokenUsage(100, 20), usd("0.001"), "tool_use"),
        (2, TokenUsage(130, 9), usd("0.002"), "end_turn"),
    ]
    assert [e.call for e in events if isinstance(e, ModelCallStart)] == [1, 2]


async def test_a_tool_result_carries_its_own_duration_not_the_time_since_the_start() -> None:
    release = asyncio.Event()

    @tool
    async def slow() -> str:
        """Wait until released."""
        await release.wait()
        return "done"

    @tool
    async def quick() -> str:
        """Return at once."""
        return "quick"

    script = [calls(call("c1", "slow"), call("c2", "quick")), answer("ok")]
    turn = NeuronTurn(
        ScriptedProvider(script),
        tools=ToolRegistry([slow, quick]),
        config=NeuronTurnConfig(model="m", parallel_tools=True),
    )
    results: list[ToolResult] = []
    async with turn.stream(ask()) as events:
        async for event in events:
            if isinstance(event, ToolResult):
                results.append(event)
                if event.name == "quick":
                    # The quick call is reported while the slow one still runs.
                    release.set()
    assert [r.name for r in results] == ["quick", "slow"]
    assert results[0].content == "quick" and not results[0].is_error
    records = {r.name: r.duration for r in events.output.metadata.tools_called}
    assert {r.name: r.duration for r in results} == records


async def test_streaming_ends_with_exactly_the_output_execute_returns() -> None:
    script = [
        calls(call("c1", "add", a=2, b=3), usage=TokenUsage(10, 4), cost="0.001"),
        calls(call("c2", "write_memory", scope="session:s1", key="k", value=5)),
        answer("done", usage=TokenUsage(12, 3)),
    ]
    executed = await _turn(ScriptedProvider(script)).execute(ask(session="s1"))
    events = await _collect(_turn(ScriptedProvider(script, chunk_size=2)), session="s1")

    last = events[-1]
    assert isinstance(last, TurnDone)
    assert _timeless(last.output) == _timeless(executed)


async def test_every_declared_effect_is_reported_as_it_is_declared() -> None:
    script = [
        calls(call("c1", "write_memory", scope="session:s1", key="k", value=5)),
        answer("done"),
    ]
    events = await _collect(_turn(ScriptedProvider(script)), session="s1")

    kinds = [type(e).__name__ for e in events]
    first_effect = kinds.index("EffectDeclared")
    assert kinds[first_effect - 1] == "ToolStart"
    assert kinds[first_effect + 1] == "ToolResult"
    effects = [e.effect for e in events if isinstance(e, EffectDeclared)]
    output = events[-1]
    assert isinstance(output, TurnDone)
    assert effects == list(output.output.effects)
    history = effects[-1]  # the history append, declared last
    assert isinstance(history, CustomEffect) and history.effect_type == "append_history"


async def test_an_unpriced_model_warning_is_reported_before_its_call_is_done() -> None:
    unpriced = ProviderResponse((TextPart("hi"),), "end_turn", model="mystery", cost=None)
    events = await _collect(_turn(ScriptedProvider([unpriced])))

    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "ModelCallStart",
        "TextDelta",
        "EffectDeclared",
        "ModelCallDone",
        "Lifecycle",
        "TurnDone",
    ]
    effect = events[2]
    assert isinstance(effect, EffectDeclared) and isinstance(effect.effect, LogEffect)


async def test_a_hook_halt_is_reported_before_the_output() -> None:
    hooks = HookRegistry()

    async def halt(ctx: HookContext) -> Halt:
        return Halt(reason="policy says no")

    hooks.add(FunctionHook(halt, points=[HookPoint.PRE_TOOL_USE]))
    turn, _ = build(_script(), hooks=hooks)
    events = [event async for event in turn.stream(ask())]

    assert events[-2] == HookHalted("policy says no")
    last = events[-1]
    assert isinstance(last, TurnDone)
    assert last.output.exit_reason == ObserverHalt(reason="policy says no")


async def test_a_limit_exit_is_reported_before_the_output() -> None:
    turn, _ = build(_script())
    events = [event async for event in turn.stream(ask(config=TurnConfig(max_turns=1)))]

    assert events[-2] == LimitReached("max_turns")
    assert isinstance(events[-1], TurnDone) and events[-1].output.exit_reason == "max_turns"


async def test_a_provider_that_cannot_stream_gives_its_answer_as_one_delta() -> None:
    class Whole:
        async def complete(self, request: ProviderRequest) -> ProviderResponse:
            return ProviderResponse(
                (ThinkingPart("hmm", "sig"), TextPart("the whole answer")), "end_turn"
            )

    events = await _collect(_turn(Whole()))

    assert events[1:3] == [ThinkingDelta("hmm"), TextDelta("the whole answer")]
    assert isinstance(events[-1], TurnDone)


async def test_a_stream_cut_off_midway_raises_the_providers_error_after_its_deltas() -> None:
    cut = [TextDelta("Hel"), ProviderConnectionError("the stream ended early", provider="x")]
    turn = _turn(ScriptedProvider([cut]))
    seen: list[TurnEvent] = []

    with pytest.raises(RetryableError, match="the stream ended early"):
        async for event in turn.stream(ask()):
            seen.append(event)

    assert seen == [ModelCallStart(1), TextDelta("Hel")]


async def test_a_stream_without_a_final_response_is_an_error() -> None:
    turn = _turn(ScriptedProvider([[TextDelta("Hel")]]))

    with pytest.raises(ModelError, match="ended without a final response"):
        [event async for event in turn.stream(ask())]


async def test_execute_on_a_scripted_stream_returns_its_response() -> None:
    script = [[TextDelta("a"), TextDelta("b"), answer("ab")]]

    output = await _turn(ScriptedProvider(script)).execute(ask())

    assert output.message.as_text() == "ab"


class _Hanging:
    """A provider whose stream hangs after its first delta until cancelled."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        raise AssertionError("streamed turns call stream()")

    async def stream(self, request: ProviderRequest) -> Any:
        try:
            yield TextDelta("first")
            await asyncio.Event().wait()
        finally:
            self.closed.set()


def _other_tasks() -> set[asyncio.Task[Any]]:
    return asyncio.all_tasks() - {asyncio.current_task()}  # type: ignore[operator]


async def test_closing_the_stream_mid_answer_closes_the_providers_stream() -> None:
    provider = _Hanging()
    stream = _turn(provider).stream(ask())

    async for event in stream:
        if isinstance(event, TextDelta):
            break
    await stream.aclose()

    assert provider.closed.is_set()
    assert not _other_tasks()


async def test_breaking_out_of_the_loop_cancels_the_turn() -> None:
    provider = _Hanging()

    async for event in _turn(provider).stream(ask()):
        if isinstance(event, TextDelta):
            break
    gc.collect()
    await provider.closed.wait()  # closed by asyncio's finalizer for the dropped iterator

    assert provider.closed.is_set()


async def test_cancelling_the_consumer_cancels_running_tools() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    @tool
    async def forever() -> str:
        """Never return."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return "unreachable"

    turn = NeuronTurn(
        ScriptedProvider([calls(call("c1", "forever")), answer("never")]),
        tools=ToolRegistry([forever]),
        config=NeuronTurnConfig(model="m"),
    )

    async def consume() -> None:
        async with turn.stream(ask()) as events:
            async for _ in events:
                pass

    consumer = asyncio.create_task(consume())
    await started.wait()
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer

    assert cancelled.is_set()
    assert not _other_tasks()


async def test_output_is_available_after_the_stream_is_read() -> None:
    stream = _turn(ScriptedProvider([answer("hi")])).stream(ask())
    with pytest.raises(RuntimeError, match="has not finished"):
        _ = stream.output

    async with stream as events:
        async for _ in events:
            pass

    assert stream.output.message.as_text() == "hi"


async def test_a_stream_is_iterated_once() -> None:
    stream = _turn(ScriptedProvider([answer("hi")])).stream(ask())
    [event async for event in stream]

    with pytest.raises(RuntimeError, match="iterated once"):
        [event async for event in stream]


async def test_every_event_has_a_json_form_tagged_with_its_type() -> None:
    script = [
        calls(call("c1", "write_memory", scope="session:s1", key="k", value=5), cost="0.25"),
        answer("done"),
    ]
    events = await _collect(_turn(ScriptedProvider(script)), session="s1")

    lines = [json.loads(json.dumps(event_json(event))) for event in events]

    assert [line["type"] for line in lines][:3] == [
        "model_call_start",
        "tool_call_start",
        "tool_call_delta",
    ]
    done = next(line for line in lines if line["type"] == "model_call_done")
    assert done["cost"] == "0.25" and done["usage"]["input_tokens"] == 10
    effect = next(line for line in lines if line["type"] == "effect")
    assert effect["effect"]["type"] == "write_memory"
    assert lines[-1]["type"] == "turn_done"
    assert lines[-1]["output"]["message"] == "done"


async def test_limit_json_holds_the_wire_exit_reason() -> None:
    assert event_json(LimitReached("timeout")) == {"type": "limit_reached", "reason": "timeout"}
    assert event_json(HookHalted("no")) == {"type": "hook_halted", "reason": "no"}


async def test_every_event_is_rebuilt_from_its_json() -> None:
    script = [
        calls(call("c1", "write_memory", scope="session:s1", key="k", value=5), cost="0.25"),
        answer("done"),
    ]
    events = await _collect(_turn(ScriptedProvider(script, chunk_size=3)), session="s1")
    events += [HookHalted("no"), LimitReached("timeout"), ThinkingDelta("hm")]
    events += [Lifecycle(BudgetWarning(workflow="w", spent=usd("0.8"), limit=usd("1")))]

    rebuilt = [event_from_json(json.loads(json.dumps(event_json(event)))) for event in events]

    assert rebuilt == events


def test_json_that_is_no_event_is_refused() -> None:
    with pytest.raises(ValueError, match="not a turn event"):
        event_from_json({"type": "nope"})
    with pytest.raises(ValueError, match="model_call_start event without"):
        event_from_json({"type": "model_call_start"})


async def test_a_cancelled_reader_is_handed_the_notes_its_works_stop_left() -> None:
    started = asyncio.Event()

    async def work(sink: Any) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError as cancelled:
            cancelled.add_note("the remote stop was not seen through")
            raise

    events: EventStream[Any, None] = EventStream(work)

    async def read() -> None:
        try:
            async for _ in events:
                pass
        except asyncio.CancelledError as cancelled:
            await close_cancelled(events, cancelled)
            raise

    reading = asyncio.ensure_future(read())
    await started.wait()
    reading.cancel()
    with pytest.raises(asyncio.CancelledError) as raised:
        await reading

    assert events.stop_notes == ("the remote stop was not seen through",)
    assert raised.value.__notes__ == ["the remote stop was not seen through"]
