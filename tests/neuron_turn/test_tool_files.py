"""Files a tool returns (`ToolReturn`): they reach the model with its result, and stay."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest

from layer0 import Base64Source, Content, CustomBlock, HookPoint, ToolResultBlock, UrlSource
from layer0.testing import InMemoryStore, RecordingHook
from neuron_hooks import HookRegistry
from neuron_tool import ToolReturn, document_block, image_block, tool
from neuron_turn import (
    DocumentPart,
    ImagePart,
    NeuronTurnConfig,
    ProviderMessage,
    TextPart,
    ToolResult,
    ToolResultPart,
    describe_file,
    event_from_json,
    event_json,
    files_intro,
    unseen_file_note,
)
from neuron_turn.cli._stream_output import describe
from neuron_turn.loop._convert import (
    TOOL_FILES_TYPE,
    content_from_parts,
    history_from_json,
    history_to_json,
    parts_from_content,
)
from neuron_turn.loop.tokens import estimate_tokens

from .support import answer, appended, ask, build, call, calls

PNG = b"\x89PNG\r\n\x1a\n a chart"
PDF = b"%PDF-1.7 the report"
IMAGE = ImagePart(Base64Source(data=base64.b64encode(PNG).decode()), "image/png")
REPORT = DocumentPart(
    Base64Source(data=base64.b64encode(PDF).decode()), "application/pdf", "q3.pdf"
)


@tool
async def chart(title: str) -> ToolReturn:
    """Draw a chart and fetch its report."""
    return ToolReturn(
        {"drawn": title}, files=[image_block(PNG), document_block(PDF, name="q3.pdf")]
    )


@tool
async def plain(text: str) -> str:
    """Return the text."""
    return text


async def test_a_tools_files_reach_the_model_with_its_result() -> None:
    turn, model = build([calls(call("c1", "chart", title="q3")), answer("done")], tools=[chart])

    output = await turn.execute(ask("draw"))

    assert output.exit_reason == "complete"
    results = model.requests[1].messages[-1].content
    assert results == [ToolResultPart("c1", '{"drawn":"q3"}', False, (IMAGE, REPORT))]


async def test_concurrent_calls_keep_each_results_own_files_in_the_models_order() -> None:
    config = NeuronTurnConfig(model="test-model", parallel_tool_calls=True)
    turn, model = build(
        [calls(call("c1", "chart", title="a"), call("c2", "plain", text="b")), answer("ok")],
        tools=[chart, plain],
        config=config,
    )

    await turn.execute(ask("both"))

    first, second = model.requests[1].messages[-1].content
    assert isinstance(first, ToolResultPart) and first.files == (IMAGE, REPORT)
    assert second == ToolResultPart("c2", "b", False)


async def test_the_post_tool_use_hook_sees_the_results_text() -> None:
    recorder = RecordingHook([HookPoint.POST_TOOL_USE])
    hooks = HookRegistry()
    hooks.add(recorder, name="recorder")
    script = [calls(call("c1", "chart", title="q")), answer("ok")]
    turn, _ = build(script, tools=[chart], hooks=hooks)
    await turn.execute(ask("go"))
    assert [c.tool_result for c in recorder.seen] == ['{"drawn":"q"}']


async def test_a_results_files_are_stored_after_it_and_sent_again_in_the_next_turn() -> None:
    store = InMemoryStore()
    turn, model = build(
        [calls(call("c1", "chart", title="q3")), answer("drawn"), answer("it grew")],
        tools=[chart],
        state=store,
    )
    first = await turn.execute(ask("draw", session="s1"))
    stored = appended(first).messages
    await store.append_history(appended(first))

    await turn.execute(ask("what did it show?", session="s1"))

    results: Any = stored[2]["content"]  # type: ignore[index,call-overload]
    assert [block["type"] for block in results] == ["tool_result", "custom"]
    assert results[1]["content_type"] == TOOL_FILES_TYPE
    assert results[1]["data"]["tool_use_id"] == "c1"
    resent = model.requests[2].messages[2].content
    assert resent == [ToolResultPart("c1", '{"drawn":"q3"}', False, (IMAGE, REPORT))]


def test_the_stored_form_is_plain_layer0_content_a_reader_without_files_still_reads() -> None:
    result = ToolResultPart("c1", "took it", False, (IMAGE,))
    content = content_from_parts([result])
    wire = Content.model_validate_json(content.model_dump_json())
    assert isinstance(wire.root, list)
    plain, files = wire.root
    assert plain == ToolResultBlock(tool_use_id="c1", content="took it", is_error=False)
    assert isinstance(files, CustomBlock) and files.content_type == TOOL_FILES_TYPE
    assert parts_from_content(wire) == [result]


def test_files_by_url_and_each_results_own_files_survive_the_round_trip() -> None:
    linked = DocumentPart(UrlSource(url="https://example.com/a.pdf"), "application/pdf")
    history = [
        ProviderMessage(
            "user",
            [
                ToolResultPart("c1", "a", False, (IMAGE,)),
                ToolResultPart("c2", "b", True),
                ToolResultPart("c3", "", False, (linked, REPORT)),
                TextPart("and look"),
            ],
        )
    ]
    assert history_from_json(history_to_json(history))[0].content == history[0].content


@pytest.mark.parametrize(
    "data",
    [
        {
            "tool_use_id": "other",
            "files": [
                {"type": "image", "media_type": "image/png", "source": {"type": "url", "url": "u"}}
            ],
        },
        {"tool_use_id": "c1", "files": []},
        {"tool_use_id": "c1", "files": [{"type": "text", "text": "not a file"}]},
        {"tool_use_id": "c1"},
        "not an object",
    ],
)
def test_a_files_block_not_of_the_result_before_it_is_kept_as_text_not_dropped(
    data: object, caplog: pytest.LogCaptureFixture
) -> None:
    block = CustomBlock(content_type=TOOL_FILES_TYPE, data=data)
    content = Content([ToolResultBlock(tool_use_id="c1", content="x", is_error=False), block])
    with caplog.at_level(logging.WARNING, logger="neuron_turn"):
        result, kept = parts_from_content(content)
    assert result == ToolResultPart("c1", "x", False)
    assert isinstance(kept, TextPart) and TOOL_FILES_TYPE in kept.text
    assert "neuron.tool_files" in caplog.text


def test_a_files_block_with_no_result_before_it_is_kept_as_text() -> None:
    block = CustomBlock(content_type=TOOL_FILES_TYPE, data={"tool_use_id": "c1", "files": []})
    (kept,) = parts_from_content(Content([block]))
    assert isinstance(kept, TextPart) and TOOL_FILES_TYPE in kept.text


def test_a_results_files_count_in_the_token_estimate() -> None:
    bare = estimate_tokens([ProviderMessage("user", [ToolResultPart("c1", "x")])])
    with_files = estimate_tokens(
        [ProviderMessage("user", [ToolResultPart("c1", "x", False, (IMAGE, IMAGE))])]
    )
    big = DocumentPart(Base64Source(data="A" * 400_000), "application/pdf")
    with_document = estimate_tokens(
        [ProviderMessage("user", [ToolResultPart("c1", "x", False, (big,))])]
    )
    assert with_files - bare >= 2 * 1_000  # an image is counted as a fixed number of tokens
    assert 30_000 < with_document < 100_000  # by its size, as a document in a message


def test_the_provider_helpers_name_each_file_and_its_call() -> None:
    result = ToolResultPart("c1", "x", False, (IMAGE, REPORT))
    assert describe_file(IMAGE) == "an image (image/png)"
    assert describe_file(REPORT) == "the document q3.pdf (application/pdf)"
    assert describe_file(DocumentPart(IMAGE.source, "text/plain")) == "a document (text/plain)"
    assert describe_file(DocumentPart(IMAGE.source, "audio/wav", "call.wav")) == (
        "the audio call.wav (audio/wav)"
    )
    assert describe_file(DocumentPart(IMAGE.source, "audio/wav")) == "an audio file (audio/wav)"
    assert describe_file(DocumentPart(IMAGE.source, "video/mp4")) == "a video (video/mp4)"
    assert files_intro(result, "chart") == (
        "The tool call chart (call c1) returned these 2 files with its result:"
    )
    assert files_intro(ToolResultPart("c2", "x", False, (IMAGE,))) == (
        "The tool call c2 returned this file with its result:"
    )
    assert unseen_file_note(REPORT, "this API takes no documents") == (
        "[The tool returned the document q3.pdf (application/pdf), which is not shown: "
        "this API takes no documents]"
    )


async def test_a_streamed_tool_result_names_its_files_and_its_json_keeps_them() -> None:
    turn, _ = build([calls(call("c1", "chart", title="q3")), answer("done")], tools=[chart])

    events = [event async for event in turn.stream(ask("draw"))]

    (result,) = [event for event in events if isinstance(event, ToolResult)]
    assert result.files == ("an image (image/png)", "the document q3.pdf (application/pdf)")
    wire = event_json(result)
    assert wire["files"] == list(result.files)
    assert event_from_json(json.loads(json.dumps(wire))) == result
    assert "iVBOR" not in json.dumps(wire)  # names, never the data


def test_a_tool_result_without_files_has_no_files_key_and_a_bad_one_is_refused() -> None:
    plain = ToolResult("c1", "add", "3", False, 5)
    assert "files" not in event_json(plain)
    with pytest.raises(ValueError, match="tool_result event without a valid files"):
        event_from_json({**event_json(plain), "files": [1]})


def test_the_activity_line_of_a_result_names_its_files() -> None:
    event = ToolResult("c1", "chart", "drawn", False, 1200, ("an image (image/png)",))
    assert describe(event) == "[tool] chart -> drawn [+ an image (image/png)] (1.20s)"
