"""A turn asked for its timeline records its model calls, tool calls, effects, halts and limits."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from layer0 import (
    APPEND_HISTORY,
    CustomEffect,
    EffectEntry,
    Halt,
    HookContext,
    HookHaltEntry,
    HookPoint,
    LimitEntry,
    ModelCallEntry,
    ToolCallEntry,
    TurnConfig,
    TurnInput,
    TurnOutput,
    TurnTimeline,
    WriteMemoryEffect,
    request_timeline,
    take_timeline,
    usd,
)
from neuron_hooks import FunctionHook, HookRegistry
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderStreamEvent,
    TextDelta,
    TokenUsage,
    ToolUsePart,
    TurnDone,
)
from neuron_turn.loop._recorder import MAX_OUTPUT_CHARS
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def slow(n: int) -> int:
    """Wait a little, then return n."""
    await asyncio.sleep(0.05)
    return n


@tool
async def fail() -> str:
    """Always fail."""
    raise ValueError("no luck")


@tool
async def big() -> str:
    """Return a long text."""
    return "x" * (MAX_OUTPUT_CHARS + 10)


class CompleteOnly(ScriptedProvider):
    """A scripted provider that must not be streamed (recording alone streams nothing)."""

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        raise AssertionError("the provider was streamed for a turn nobody streams")
        yield  # pragma: no cover


def asked(message: str = "go", session: str | None = "s") -> TurnInput:
    return request_timeline(TurnInput(message=message, trigger="user", session=session))


async def timeline_of(turn: NeuronTurn, input: TurnInput) -> tuple[TurnOutput, TurnTimeline]:
    output, timeline = take_timeline(await turn.execute(input))
    assert timeline is not None
    return output, timeline


async def test_model_and_tool_calls_are_recorded_with_usage_cost_input_and_output() -> None:
    provider = CompleteOnly(
        [
            tool_call_response(
                ToolUsePart("c1", "add", {"a": 2, "b": 3}),
                ToolUsePart("c2", "fail", {}),
                usage=TokenUsage(10, 5, cache_read_tokens=2),
                cost=usd("0.0006"),
            ),
            text_response("5", usage=TokenUsage(12, 1), cost=usd("0.0001")),
        ]
    )
    turn = NeuronTurn(provider, tools=ToolRegistry([add, fail]))
    output, timeline = await timeline_of(turn, asked())
    first, added, failed, second = timeline.entries
    assert isinstance(first, ModelCallEntry) and isinstance(second, ModelCallEntry)
    assert (first.call, first.stop_reason, first.input_tokens, first.cache_read_tokens) == (
        1,
        "tool_use",
        10,
        2,
    )
    assert (first.cost, second.cost, second.stop_reason) == (
        usd("0.0006"),
        usd("0.0001"),
        "end_turn",
    )
    assert isinstance(added, ToolCallEntry) and isinstance(failed, ToolCallEntry)
    assert (added.name, added.input, added.output, added.is_error) == (
        "add",
        {"a": 2, "b": 3},
        "5",
        False,
    )
    assert (failed.name, failed.is_error) == ("fail", True) and "no luck" in failed.output
    assert first.start <= added.start <= second.start
    # The history append is the turn's messages, which the output holds: not repeated.
    assert not any(isinstance(e, EffectEntry) for e in timeline.entries)
    append = next(e for e in output.effects if isinstance(e, CustomEffect))
    assert append.effect_type == APPEND_HISTORY
    assert isinstance(append.data, dict) and append.data["turn_id"] == timeline.turn_id


async def test_a_turn_not_asked_adds_no_timeline() -> None:
    turn = NeuronTurn(ScriptedProvider([text_response("hi")]))
    output = await turn.execute(TurnInput(message="go", trigger="user", session="s"))
    assert take_timeline(output) == (output, None)


async def test_the_timeline_effect_comes_last_and_the_rest_equal_an_unrecorded_turn() -> None:
    def turn() -> NeuronTurn:
        return NeuronTurn(ScriptedProvider([text_response("hi")]))

    recorded = await turn().execute(asked(session=None))
    plain = await turn().execute(TurnInput(message="go", trigger="user"))
    last = recorded.effects[-1]
    assert isinstance(last, CustomEffect) and last.effect_type == "turn_timeline"
    assert recorded.effects[:-1] == plain.effects
    assert recorded.message == plain.message


async def test_effects_are_recorded_when_declared() -> None:
    write = ToolUsePart("w1", "write_memory", {"scope": "session", "key": "k", "value": "v"})
    turn = NeuronTurn(ScriptedProvider([tool_call_response(write), text_response("saved")]))
    _, timeline = await timeline_of(turn, asked())
    kinds = [entry.kind for entry in timeline.entries]
    assert kinds == ["model_call", "effect", "tool_call", "model_call"]
    effect = timeline.entries[1]
    assert isinstance(effect, EffectEntry) and isinstance(effect.effect, WriteMemoryEffect)


async def test_concurrent_tool_calls_overlap_on_the_timeline() -> None:
    calls = [ToolUsePart(f"c{n}", "slow", {"n": n}) for n in range(3)]
    turn = NeuronTurn(
        ScriptedProvider([tool_call_response(*calls), text_response("done")]),
        tools=ToolRegistry([slow]),
        config=NeuronTurnConfig(parallel_tools=True),
    )
    _, timeline = await timeline_of(turn, asked())
    tools = [e for e in timeline.entries if isinstance(e, ToolCallEntry)]
    assert [t.id for t in tools] == ["c0", "c1", "c2"]
    assert all(t.duration >= 50 for t in tools)
    # Each started before the others finished: they ran at once, not one after another.
    assert max(t.start for t in tools) < min(t.start + t.duration for t in tools)


async def test_a_long_tool_output_is_cut_in_the_timeline_and_kept_whole_in_the_history() -> None:
    turn = NeuronTurn(
        ScriptedProvider([tool_call_response(ToolUsePart("b", "big", {})), text_response("ok")]),
        tools=ToolRegistry([big]),
    )
    output, timeline = await timeline_of(turn, asked())
    entry = next(e for e in timeline.entries if isinstance(e, ToolCallEntry))
    assert entry.truncated and len(entry.output) == MAX_OUTPUT_CHARS
    assert "x" * (MAX_OUTPUT_CHARS + 10) in output.effects[0].model_dump_json()


async def test_a_limit_and_a_hook_halt_are_recorded() -> None:
    again = ToolUsePart("c", "add", {"a": 1, "b": 1})
    limited = NeuronTurn(ScriptedProvider([tool_call_response(again)]), tools=ToolRegistry([add]))
    input = asked().model_copy(update={"config": TurnConfig(max_turns=1)})
    _, timeline = await timeline_of(limited, input)
    last = timeline.entries[-1]
    assert isinstance(last, LimitEntry) and last.reason == "max_turns"

    hooks = HookRegistry()

    async def stop(ctx: HookContext) -> Halt:
        return Halt(reason="enough")

    hooks.add(FunctionHook(stop, points={HookPoint.POST_INFERENCE}, name="stop"))
    halted = NeuronTurn(ScriptedProvider([text_response("hi")]), hooks=hooks)
    _, timeline = await timeline_of(halted, asked())
    kinds = [entry.kind for entry in timeline.entries]
    assert kinds == ["model_call", "hook_halt"]
    halt = timeline.entries[1]
    assert isinstance(halt, HookHaltEntry) and halt.reason == "enough"


async def test_a_streamed_turn_asked_for_its_timeline_streams_and_records_alike() -> None:
    provider = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "add", {"a": 2, "b": 3})), text_response("is 5")],
        chunk_size=2,
    )
    turn = NeuronTurn(provider, tools=ToolRegistry([add]))
    async with turn.stream(asked()) as events:
        seen = [event async for event in events]
    texts = "".join(e.text for e in seen if isinstance(e, TextDelta))
    assert texts == "is 5"
    done = seen[-1]
    assert isinstance(done, TurnDone)
    _, timeline = take_timeline(done.output)
    assert timeline is not None
    assert [e.kind for e in timeline.entries] == ["model_call", "tool_call", "model_call"]
