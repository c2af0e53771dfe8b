"""The run state's shortcuts produce exactly what validation would."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from layer0 import (
    Content,
    HookContext,
    HookPoint,
    TextBlock,
    ToolCallRecord,
    ToolResultBlock,
    ToolUseBlock,
    TurnConfig,
)
from neuron_turn import NeuronTurnConfig, ProviderMessage, TextPart, ToolResultPart, ToolUsePart
from neuron_turn.loop._convert import content_from_parts
from neuron_turn.loop._run import RunState, tool_call_record
from neuron_turn.loop._trusted import is_plain_json
from neuron_turn.loop.approval import merge_results

from .support import dollars


def test_trusted_hook_context_equals_a_validated_one() -> None:
    run = RunState(NeuronTurnConfig().resolve(TurnConfig()), "s", [])
    run.tokens_in, run.tokens_out, run.turns_used, run.cost = 10, 5, 2, dollars("0.25")
    fast = run.hook_context(
        HookPoint.PRE_TOOL_USE, tool_name="t", tool_input={"a": [1]}, model_output=Content("x")
    )
    validated = HookContext(
        point=HookPoint.PRE_TOOL_USE,
        tool_name="t",
        tool_input={"a": [1]},
        tool_result=None,
        model_output=Content("x"),
        tokens_used=15,
        cost=dollars("0.25"),
        turns_completed=2,
        elapsed=fast.elapsed,
    )
    assert fast == validated
    assert fast.model_fields_set == validated.model_fields_set
    adapter = TypeAdapter(HookContext)
    assert adapter.dump_json(fast) == adapter.dump_json(validated)
    assert adapter.validate_json(adapter.dump_json(fast)) == fast


def test_trusted_tool_call_record_equals_a_validated_one() -> None:
    fast = tool_call_record("add", 3, True)
    validated = ToolCallRecord(name="add", duration=3, success=True)
    assert fast == validated
    assert fast.model_fields_set == validated.model_fields_set
    adapter = TypeAdapter(ToolCallRecord)
    assert adapter.dump_json(fast) == adapter.dump_json(validated)


def test_tool_call_record_still_validates_what_the_loop_did_not_make() -> None:
    with pytest.raises(ValidationError):
        tool_call_record(7, 3, True)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        tool_call_record("add", -1, True)


def _results(*ids: str) -> ProviderMessage:
    return ProviderMessage("user", [ToolResultPart(i, f"r{i}") for i in ids])


def test_request_messages_merge_only_new_messages_as_merge_results_does() -> None:
    run = RunState(NeuronTurnConfig().resolve(TurnConfig()), "s", [])
    run.messages.append(ProviderMessage("user", [TextPart("hi")]))
    assert run.request_messages() == tuple(merge_results(run.messages))
    run.messages.append(ProviderMessage("assistant", [ToolUsePart("a", "t", {})]))
    run.messages.extend([_results("a"), _results("b")])  # a paused turn's two result messages
    first = run.request_messages()
    assert first == tuple(merge_results(run.messages))
    assert len(first) == 3 and [p.tool_use_id for p in first[-1].content] == ["a", "b"]
    run.messages.append(_results("c"))  # joins the merged message again
    assert run.request_messages() == tuple(merge_results(run.messages))
    assert len(first[-1].content) == 2  # the earlier request's snapshot is unchanged
    run.messages.pop()
    run.messages.append(ProviderMessage("assistant", [TextPart("done")]))  # last one replaced
    assert run.request_messages() == tuple(merge_results(run.messages))
    run.messages = [ProviderMessage("user", [TextPart("compacted")])]  # another list
    assert run.request_messages() == tuple(merge_results(run.messages))
    assert run.sent_from == 1


def _validated_content(parts: list[object]) -> Content:
    return Content(
        [
            TextBlock(text=p.text)
            if isinstance(p, TextPart)
            else ToolUseBlock(id=p.id, name=p.name, input=p.input)
            if isinstance(p, ToolUsePart)
            else ToolResultBlock(tool_use_id=p.tool_use_id, content=p.content, is_error=p.is_error)
            for p in parts
            if isinstance(p, TextPart | ToolUsePart | ToolResultPart)
        ]
    )


def test_trusted_content_equals_validated_content_block_for_block() -> None:
    parts: list[object] = [
        TextPart("hi"),
        ToolUsePart("c1", "add", {"a": 1, "b": [2.5, None, True, {"k": "v"}]}),
        ToolResultPart("c1", "3", is_error=True),
    ]
    fast = content_from_parts(parts)  # type: ignore[arg-type]
    validated = _validated_content(parts)
    assert fast == validated
    assert fast.model_fields_set == validated.model_fields_set
    for mine, theirs in zip(fast.root, validated.root, strict=True):  # type: ignore[arg-type]
        assert type(mine) is type(theirs)
        assert mine.model_fields_set == theirs.model_fields_set  # type: ignore[union-attr]
        assert mine.__dict__ == theirs.__dict__
    adapter = TypeAdapter(Content)
    assert adapter.dump_json(fast) == adapter.dump_json(validated)
    assert content_from_parts([TextPart("only")]) == Content("only")  # type: ignore[list-item]


def test_content_of_a_call_whose_input_is_not_json_is_judged_by_validation() -> None:
    for odd in (object(), (1, 2), {1, 2}):
        with pytest.raises(ValidationError, match="input"):
            content_from_parts([ToolUsePart("c1", "t", {"x": odd})])


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        ({"a": [1, "x", None, 1.5, False]}, True),
        ({1: "int key"}, False),
        ({"t": (1,)}, False),
        ({"s": {1}}, False),
        ([[[[1]]]], True),
    ],
)
def test_is_plain_json_accepts_only_json_types(value: object, plain: bool) -> None:
    assert is_plain_json(value) is plain


def test_is_plain_json_refuses_nesting_past_its_depth_and_cycles() -> None:
    deep: list[object] = []
    inner = deep
    for _ in range(70):
        inner.append([])
        inner = inner[0]  # type: ignore[assignment]
    assert not is_plain_json(deep)
    loop: list[object] = []
    loop.append(loop)
    assert not is_plain_json(loop)
