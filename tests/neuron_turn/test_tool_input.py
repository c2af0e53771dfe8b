"""Tool-call arguments nested too deep: refused as a tool error the model reads, never a crash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    Continue,
    HookAction,
    HookContext,
    HookPoint,
    ModelError,
    SessionScope,
    TurnOutput,
)
from layer0.testing import InMemoryStore
from neuron_hooks import FunctionHook, HookRegistry
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolRegistry, is_tool_name
from neuron_turn import (
    NeuronTurn,
    ProviderResponse,
    RawPart,
    TextPart,
    ToolCallDelta,
    ToolCallStart,
    ToolResultPart,
    ToolStart,
    ToolUsePart,
)
from neuron_turn.loop._convert import history_from_json
from neuron_turn.loop._nesting import MAX_INPUT_DEPTH
from neuron_turn.loop._tool_input import StreamedCallIds, guard_tool_calls
from neuron_turn.loop._well_formed import well_formed
from neuron_turn.testing import ScriptedProvider

from .support import answer, ask, build, call, calls, echo


def nested(depth: int, leaf: JsonValue = "x") -> JsonValue:
    """`depth` levels of objects (and lists, alternately) around `leaf`."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


@pytest.mark.parametrize("depth", [MAX_INPUT_DEPTH + 1, 255, 300, 5000])
async def test_deeply_nested_arguments_become_a_tool_error_and_the_turn_goes_on(
    depth: int,
) -> None:
    turn, provider = build(
        [calls(call("c1", "echo", text=nested(depth))), answer("sorry, flatter next time")],
        state=InMemoryStore(),
    )
    output = await turn.execute(ask(session="s1"))
    assert output.exit_reason == "complete"
    [result] = provider.requests[1].messages[-1].content
    assert isinstance(result, ToolResultPart) and result.is_error
    assert f"nest deeper than {MAX_INPUT_DEPTH} levels" in result.content
    assert "'echo'" in result.content
    assert not output.metadata.tools_called[0].success
    # The whole output, history included, is valid layer0 JSON again.
    assert TurnOutput.model_validate_json(output.model_dump_json()) == output


async def test_arguments_at_the_limit_still_reach_the_tool() -> None:
    turn, provider = build(
        [calls(call("c1", "echo", text=nested(MAX_INPUT_DEPTH - 1))), answer("ok")]
    )
    await turn.execute(ask())
    [result] = provider.requests[1].messages[-1].content
    # The tool's own schema check answers (echo takes a string): the call got through.
    assert isinstance(result, ToolResultPart)
    assert result.content.startswith("invalid input for tool 'echo' at $.text")


async def test_a_refused_call_reaches_no_tool_hook_and_post_inference_sees_it_empty() -> None:
    seen: list[HookContext] = []

    async def watch(ctx: HookContext) -> HookAction:
        seen.append(ctx)
        return Continue()

    hooks = HookRegistry()
    hooks.add(FunctionHook(watch, points=[HookPoint.PRE_TOOL_USE, HookPoint.POST_INFERENCE]))
    turn, _ = build([calls(call("c1", "echo", text=nested(300))), answer("ok")], hooks=hooks)
    output = await turn.execute(ask())
    assert output.exit_reason == "complete"
    assert [ctx.point for ctx in seen] == [HookPoint.POST_INFERENCE] * 2
    first = seen[0].model_output
    assert first is not None and not isinstance(first.root, str)
    assert [block.input for block in first.root if block.type == "tool_use"] == [{}]


def test_a_cycle_counts_as_too_deep_without_hanging() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    [part] = guard_tool_calls([call("c1", "echo", text=loop)], set())
    assert part.input == {}  # type: ignore[union-attr]


async def test_a_provider_block_nested_too_deep_is_a_model_error_not_a_crash() -> None:
    deep = ProviderResponse(
        content=[RawPart("anthropic", nested(300)), TextPart("hi")], stop_reason="end_turn"
    )
    turn, _ = build([deep], state=InMemoryStore())
    with pytest.raises(ModelError, match="'anthropic' block nested deeper than 64 levels"):
        await turn.execute(ask(session="s1"))


async def test_a_provider_block_within_the_limit_is_kept() -> None:
    shallow = ProviderResponse(
        content=[RawPart("anthropic", nested(10)), TextPart("hi")], stop_reason="end_turn"
    )
    turn, _ = build([shallow], state=InMemoryStore())
    output = await turn.execute(ask(session="s1"))
    assert output.exit_reason == "complete"


def test_each_call_of_an_answer_gets_an_id_of_its_own() -> None:
    sent = [
        call("c1", "echo", text="a"),
        call("c1", "echo", text="b"),
        call("c1_1", "echo", text="c"),
        call("", "echo", text="d"),
        TextPart("and"),
        call("", "echo", text="e"),
    ]
    guarded = guard_tool_calls(sent, set())
    assert [getattr(p, "id", None) for p in guarded] == [
        "c1",
        "c1_1",
        "c1_1_1",
        "call_1",
        None,
        "call_2",
    ]
    assert [getattr(p, "input", None) for p in guarded] == [getattr(p, "input", None) for p in sent]
    # Ids that differ only in lone surrogates are the same text once repaired.
    repaired = guard_tool_calls(
        [call("\ud800", "echo", text="a"), call("\udbff", "echo", text="b")], set()
    )
    assert [getattr(p, "id", None) for p in repaired] == ["\ufffd", "\ufffd_1"]
    unique = [call("c1", "echo", text="a"), call("c2", "echo", text="b")]
    taken: set[str] = set()
    assert guard_tool_calls(unique, taken) is unique  # nothing to change: no copy
    assert taken == {"c1", "c2"}
    # An id an earlier answer of the conversation used is taken too.
    [again] = guard_tool_calls([call("c2", "echo", text="c")], taken)
    assert getattr(again, "id", None) == "c2_1" and taken == {"c1", "c2", "c2_1"}


async def test_a_shared_id_is_answered_once_per_call_in_the_history() -> None:
    shared = calls(call("x", "echo", text="one"), call("x", "echo", text="two"))
    turn, provider = build([shared, answer("done")])
    output = await turn.execute(ask("go"))
    assert output.exit_reason == "complete"
    results = provider.requests[1].messages[-1].content
    assert [(r.tool_use_id, r.content) for r in results] == [("x", "one"), ("x_1", "two")]  # type: ignore[union-attr]


async def test_ids_an_earlier_answer_or_turn_used_are_not_used_again(tmp_path: Path) -> None:
    # A compatible server numbering the calls of every answer from call_0: Anthropic
    # refuses a conversation whose tool_use ids repeat, so the history must not.
    first = calls(call("call_0", "echo", text="one"))
    second = calls(call("call_0", "echo", text="two"))
    async with SqliteStore(tmp_path / "s.db") as store:
        turn, provider = build([first, second, answer("done"), first, answer("done")], state=store)
        orchestrator = LocalOrchestrator({"a": turn}, store)
        await orchestrator.dispatch("a", ask("go", session="s"))
        await orchestrator.dispatch("a", ask("again", session="s"))
        history = history_from_json(await store.read(SessionScope(id="s"), HISTORY_KEY))
    ids = [p.id for m in history for p in m.content if isinstance(p, ToolUsePart)]
    assert ids == ["call_0", "call_0_1", "call_0_2"]
    results = [p.tool_use_id for m in history for p in m.content if isinstance(p, ToolResultPart)]
    assert results == ids
    assert provider.requests[-1].messages[-2].content[0].id == "call_0_2"  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["functions.search:0", "web search", "", "x" * 65, "\ud800"])
async def test_a_name_no_tool_can_have_is_refused_under_one_every_api_takes(name: str) -> None:
    # OpenAI checks the names in a conversation's history too: kept as sent, such a
    # name would make it refuse every later request of the session.
    turn, provider = build([calls(call("c1", name, text="x")), answer("done")])
    output = await turn.execute(ask("go"))
    assert output.exit_reason == "complete"
    [sent] = provider.requests[1].messages[-2].content
    [result] = provider.requests[1].messages[-1].content
    assert isinstance(sent, ToolUsePart) and isinstance(result, ToolResultPart)
    assert is_tool_name(sent.name) and sent.input == {}
    assert result.is_error and result.content.startswith("Error: there is no tool named")
    assert repr(well_formed(name)) in result.content
    assert [r.name for r in output.metadata.tools_called] == [sent.name]
    # Two names differing only in what does not fit stay apart; neither is a tool's.
    first, second = guard_tool_calls([call("a", "x.y"), call("b", "x:y")], set())
    assert getattr(first, "name", None) != getattr(second, "name", None)


@pytest.mark.parametrize(
    ("sent", "said"),
    [
        ('{"text": "Par', 'are not valid JSON, so the tool was not run: {"text": "Par;'),
        (["a", 1], 'are not a JSON object, so the tool was not run: ["a", 1];'),
        ("x" * 300, f"are not valid JSON, so the tool was not run: {'x' * 200}...;"),
    ],
)
async def test_arguments_that_are_not_an_object_are_an_error_and_kept_as_an_empty_object(
    sent: JsonValue, said: str
) -> None:
    # Anthropic refuses a tool_use whose input is not an object: kept as sent, such
    # arguments from another provider would fail the rest of the session there.
    turn, provider = build([calls(ToolUsePart("c1", "echo", sent)), answer("done")])
    output = await turn.execute(ask("go"))
    assert output.exit_reason == "complete"
    [kept] = provider.requests[1].messages[-2].content
    [result] = provider.requests[1].messages[-1].content
    assert isinstance(kept, ToolUsePart) and kept.input == {}
    assert isinstance(result, ToolResultPart) and result.is_error
    assert result.content.startswith("Error: the arguments of this call to 'echo' ")
    assert said in result.content


async def test_a_streamed_call_is_shown_under_the_id_its_tool_events_and_history_use() -> None:
    # The model reuses the id of its earlier call: the history renames it c1_1, and so
    # does the stream, from the call's start, so no consumer sees one id for two calls.
    first = calls(call("c1", "echo", text="one"))
    again = calls(call("c1", "echo", text="two"), call("", "echo", text="three"))
    provider = ScriptedProvider([first, again, answer("done")], chunk_size=4)
    turn = NeuronTurn(provider, tools=ToolRegistry([echo]))

    async with turn.stream(ask("go")) as stream:
        events = [event async for event in stream]

    started = [e.id for e in events if isinstance(e, ToolCallStart)]
    ran = [e.id for e in events if isinstance(e, ToolStart)]
    assert started == ran == ["c1", "c1_1", "call_1"]
    streamed = {e.id for e in events if isinstance(e, ToolCallDelta)}
    assert streamed == {"c1", "c1_1", "call_1"}
    assert (
        "".join(e.arguments for e in events if isinstance(e, ToolCallDelta) and e.id == "c1_1")
        == '{"text":"two"}'
    )


def test_thousands_of_calls_of_one_id_are_named_apart_alike_in_the_history_and_the_stream() -> None:
    # A hostile model repeating one id: each later call takes the next free suffix, the
    # ones an earlier answer holds skipped, in time proportional to the calls.
    taken = {"x", "x_2"}
    answer_calls = [call("x", "echo", text=str(n)) for n in range(3000)]
    expected = ["x_1", *(f"x_{n}" for n in range(3, 3002))]

    guarded = guard_tool_calls(answer_calls, set(taken))

    assert [getattr(part, "id", None) for part in guarded] == expected
    streamed: list[object] = []
    renamer = StreamedCallIds(streamed.append, taken)
    for part in answer_calls:
        renamer(ToolCallStart(part.id, part.name))
    assert [getattr(event, "id", None) for event in streamed] == expected
