"""Lone surrogates from a model or a tool are replaced; a turn never ends with a call left open."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from layer0 import (
    Base64Source,
    Content,
    Continue,
    Halt,
    HookAction,
    HookContext,
    HookPoint,
    NonRetryableError,
    TextBlock,
    TurnInput,
    TurnOutput,
)
from neuron_hooks import FunctionHook, HookRegistry
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolReturn, document_block, tool
from neuron_turn import (
    DocumentPart,
    ImagePart,
    ProviderResponse,
    TextDelta,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop._convert import history_from_json
from neuron_turn.loop._well_formed import well_formed, well_formed_json, well_formed_part

from .support import answer, appended, ask, build, call, calls, echo

SESSION = "s1"


def test_well_formed_replaces_lone_surrogates_and_joins_pairs() -> None:
    assert well_formed("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert well_formed("\ud83d\ude00") == "\U0001f600"
    assert well_formed("\udcff") == "\ufffd"


@pytest.mark.parametrize("clean", ["plain", "é and 😀", ""])
def test_well_formed_text_is_returned_itself(clean: str) -> None:
    assert well_formed(clean) is clean


def test_well_formed_json_repairs_keys_and_values_and_keeps_clean_values_itself() -> None:
    assert well_formed_json({"k\ud800": ["\udc80", 1, {"ok": "x"}]}) == {
        "k\ufffd": ["\ufffd", 1, {"ok": "x"}]
    }
    clean = {"a": [1, "x", None], "b": {"c": 2.5}}
    assert well_formed_json(clean) is clean


def test_well_formed_json_writes_nan_and_infinity_as_null_like_the_wire() -> None:
    assert well_formed_json({"x": math.nan, "y": [math.inf, -math.inf, 1.5]}) == {
        "x": None,
        "y": [None, None, 1.5],
    }
    assert well_formed_json(math.inf) is None


async def test_nan_and_infinity_in_a_models_arguments_are_kept_as_null_in_the_history(
    tmp_path: Path,
) -> None:
    # Python's JSON parser reads NaN and Infinity; the SQLite store refused them and
    # with them the whole turn's history.
    first, second = await _two_turns(
        tmp_path,
        calls(ToolUsePart("c1", "echo", {"text": "x", "n": math.nan})),
        calls(ToolUsePart("c2", "echo", {"text": "y", "values": [math.inf, -math.inf]})),
        _end_turn_with(TextPart("done")),
    )
    history = history_from_json(appended(first).messages)
    inputs = [p.input for m in history for p in m.content if isinstance(p, ToolUsePart)]
    assert inputs == [{"text": "x", "n": None}, {"text": "y", "values": [None, None]}]
    assert second.message.as_text() == "again"


def _end_turn_with(*parts: ToolUsePart | TextPart) -> ProviderResponse:
    return ProviderResponse(content=parts, stop_reason="end_turn", usage=TokenUsage(10, 5))


async def _two_turns(tmp_path: Path, *script: ProviderResponse) -> tuple[TurnOutput, TurnOutput]:
    """Two turns on one session, through the orchestrator, on a real database file."""
    async with SqliteStore(tmp_path / "state.db") as store:
        turn, _ = build([*script, _end_turn_with(TextPart("again"))], state=store)
        orchestrator = LocalOrchestrator({"a": turn}, store)
        first = await orchestrator.dispatch("a", ask("hi", session=SESSION))
        second = await orchestrator.dispatch("a", ask("more", session=SESSION))
    return first, second


async def test_lone_surrogates_from_the_model_are_replaced_and_the_turn_is_kept(
    tmp_path: Path,
) -> None:
    first, second = await _two_turns(
        tmp_path,
        calls(ToolUsePart("c\ud800", "echo", {"text": "x\udc80y"})),
        _end_turn_with(TextPart("done \ud83d")),
    )
    assert first.message.as_text() == "done \ufffd"
    assert TurnOutput.model_validate_json(first.model_dump_json()) == first
    history = history_from_json(appended(first).messages)
    assert history[1].content == [ToolUsePart("c\ufffd", "echo", {"text": "x\ufffdy"})]
    assert history[2].content == [ToolResultPart("c\ufffd", "x\ufffdy")]
    assert second.message.as_text() == "again"


@tool
async def listing() -> str:
    """A file name as the OS gave it: undecodable bytes escaped as surrogates."""
    return os.fsdecode(b"report-\xff.txt")


async def test_a_tool_result_holding_surrogate_escapes_is_replaced() -> None:
    turn, provider = build(
        [calls(ToolUsePart("c1", "listing", {})), _end_turn_with(TextPart("ok"))],
        tools=[listing, echo],
    )
    output = await turn.execute(ask("list"))
    assert output.model_dump_json()
    assert provider.requests[1].messages[-1].content == [ToolResultPart("c1", "report-\ufffd.txt")]


PDF = Base64Source(data="JVBERi0x")


def test_the_names_of_a_results_files_are_repaired_like_its_text() -> None:
    image = ImagePart(PDF, "image/png")
    named = DocumentPart(PDF, "application/pdf", os.fsdecode(b"q3-\xff.pdf"))
    repaired = well_formed_part(ToolResultPart("c1", "ok", files=(image, named)))
    assert repaired == ToolResultPart(
        "c1", "ok", files=(image, DocumentPart(PDF, "application/pdf", "q3-\ufffd.pdf"))
    )
    assert isinstance(repaired, ToolResultPart) and repaired.files[0] is image
    clean = ToolResultPart("c1", "ok", files=(image, DocumentPart(PDF, "application/pdf", "é")))
    assert well_formed_part(clean) is clean


def test_a_files_media_type_is_repaired_too() -> None:
    odd = ImagePart(PDF, "image/\udcff")
    repaired = well_formed_part(ToolResultPart("c1", "ok", files=(odd,)))
    assert repaired == ToolResultPart("c1", "ok", files=(ImagePart(PDF, "image/\ufffd"),))


async def test_a_document_named_with_a_lone_surrogate_in_the_input_is_refused() -> None:
    turn, provider = build([_end_turn_with(TextPart("never"))])
    name = os.fsdecode(b"plan-\xff.pdf")
    message = Content([TextBlock(text="read"), document_block(b"%PDF-1.7", name=name)])
    with pytest.raises(NonRetryableError, match="lone UTF-16 surrogate"):
        await turn.execute(TurnInput(message=message, trigger="user"))
    assert provider.requests == []


async def test_an_input_message_holding_a_lone_surrogate_is_refused_before_any_call() -> None:
    turn, provider = build([_end_turn_with(TextPart("never"))])
    with pytest.raises(NonRetryableError, match="lone UTF-16 surrogate"):
        await turn.execute(ask(os.fsdecode(b"hi \xff")))
    assert provider.requests == []


async def test_streamed_text_reaches_the_consumer_without_lone_surrogates() -> None:
    turn, _ = build([_end_turn_with(TextPart("a\ud800b"))])
    texts = [event.text async for event in turn.stream(ask()) if isinstance(event, TextDelta)]
    assert "".join(texts) == "a\ufffdb"


async def test_an_answer_that_ends_the_turn_with_calls_leaves_none_open(tmp_path: Path) -> None:
    # Some servers stop with "end_turn" (OpenAI's "stop") beside tool calls. The turn
    # completes as the answer says; the calls get a result saying they were not run,
    # so the session's next turn is not taken for one awaiting approval.
    first, second = await _two_turns(
        tmp_path, _end_turn_with(TextPart("done"), ToolUsePart("c1", "echo", {"text": "x"}))
    )
    assert first.exit_reason == "complete"
    history = history_from_json(appended(first).messages)
    (result,) = history[-1].content
    assert isinstance(result, ToolResultPart)
    assert (result.tool_use_id, result.is_error) == ("c1", True)
    assert result.content.startswith("Not run")
    assert second.message.as_text() == "again"


async def test_a_halt_after_the_model_asked_for_tools_leaves_no_call_open(
    tmp_path: Path,
) -> None:
    halts: list[str] = []

    async def halt_once(ctx: HookContext) -> HookAction:
        # Only the first turn's answer: the next turn on the session runs as usual.
        if halts:
            return Continue()
        halts.append("stop here")
        return Halt(reason="stop here")

    hooks = HookRegistry()
    hooks.add(FunctionHook(halt_once, points=[HookPoint.POST_INFERENCE], name="halt"))
    async with SqliteStore(tmp_path / "state.db") as store:
        turn, _ = build(
            [calls(ToolUsePart("c1", "echo", {"text": "x"})), _end_turn_with(TextPart("ok"))],
            state=store,
            hooks=hooks,
        )
        orchestrator = LocalOrchestrator({"a": turn}, store)
        first = await orchestrator.dispatch("a", ask("hi", session=SESSION))
        second = await orchestrator.dispatch("a", ask("more", session=SESSION))
    history = history_from_json(appended(first).messages)
    assert history[-1].content == [
        ToolResultPart("c1", "Not run: the turn ended before this call ran.", is_error=True)
    ]
    assert second.message.as_text() == "ok"


async def test_a_tools_document_named_with_a_lone_surrogate_is_repaired_not_a_crash() -> None:
    @tool
    async def fetch() -> ToolReturn:
        """Fetch the report."""
        name = os.fsdecode(b"q3-\xff.pdf")  # a file name that is not UTF-8
        return ToolReturn("got it", files=[document_block(b"%PDF-1.7", name=name)])

    turn, model = build([calls(call("c1", "fetch")), answer("ok")], tools=[fetch])
    output = await turn.execute(ask("get it", session="s1"))

    output.model_dump_json()  # the stored history holds the name: it must be writable
    (result,) = model.requests[1].messages[-1].content
    assert isinstance(result, ToolResultPart)
    assert isinstance(result.files[0], DocumentPart) and result.files[0].name == "q3-\ufffd.pdf"
