from __future__ import annotations

import json
from typing import Any

import pytest

from neuron_provider_anthropic._stream import StreamedError, fold_event_stream
from neuron_provider_anthropic._wire import WireError
from neuron_turn.loop.sse import iter_sse

START: dict[str, Any] = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 42, "cache_read_input_tokens": 7, "output_tokens": 1},
    },
}


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str, **usage: Any) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": usage,
    }


END = {"type": "message_stop"}


def test_iter_events_reads_event_names_multiline_data_and_skips_comments() -> None:
    text = ': keep-alive\r\nevent: ping\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: tail'

    assert list(iter_sse(text.splitlines())) == [("ping", '{"a":\n1}'), ("message", "tail")]


def test_text_deltas_fold_into_one_text_block() -> None:
    text = sse(
        START,
        block_start(0, {"type": "text", "text": ""}),
        {"type": "ping"},
        delta(0, type="text_delta", text="Hello, "),
        delta(0, type="text_delta", text="world."),
        stop(0),
        message_delta("end_turn", output_tokens=12),
        END,
    )

    message = fold_event_stream(text)

    assert message["content"] == [{"type": "text", "text": "Hello, world."}]
    assert message["stop_reason"] == "end_turn"


def test_message_delta_usage_overrides_start_usage_and_null_counts_keep_it() -> None:
    text = sse(
        START,
        message_delta("end_turn", output_tokens=99, cache_read_input_tokens=None),
        END,
    )

    usage = fold_event_stream(text)["usage"]

    assert usage == {"input_tokens": 42, "cache_read_input_tokens": 7, "output_tokens": 99}


def test_tool_input_json_fragments_are_joined_and_parsed_at_block_stop() -> None:
    tool = {"type": "tool_use", "id": "toolu_1", "name": "calc", "input": {}}
    empty = {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}}
    text = sse(
        START,
        block_start(0, tool),
        delta(0, type="input_json_delta", partial_json='{"expression": '),
        delta(0, type="input_json_delta", partial_json='"17 * 23"}'),
        stop(0),
        block_start(1, empty),
        delta(1, type="input_json_delta", partial_json=""),
        stop(1),
        message_delta("tool_use", output_tokens=30),
        END,
    )

    content = fold_event_stream(text)["content"]

    assert content == [{**tool, "input": {"expression": "17 * 23"}}, empty]


def test_thinking_deltas_and_signature_fold_into_a_signed_thinking_block() -> None:
    text = sse(
        START,
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="First, "),
        delta(0, type="thinking_delta", thinking="second."),
        delta(0, type="signature_delta", signature="EuYDCmMIDBgC=="),
        stop(0),
        message_delta("end_turn", output_tokens=20),
        END,
    )

    content = fold_event_stream(text)["content"]

    assert content == [
        {"type": "thinking", "thinking": "First, second.", "signature": "EuYDCmMIDBgC=="}
    ]


def test_an_error_event_raises_streamed_error_with_its_type_and_message() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    with pytest.raises(StreamedError) as caught:
        fold_event_stream(sse(START, error))

    assert (caught.value.kind, caught.value.message) == ("overloaded_error", "Overloaded")


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        (
            sse(block_start(0, {"type": "text", "text": ""}), END),
            "did not start with message_start",
        ),
        (sse(START, message_delta("end_turn")), "ended before message_stop"),
        (sse(START, delta(3, type="text_delta", text="x"), END), "never started"),
        ("event: message_start\ndata: {not json\n\n", "not JSON"),
        (
            sse(
                START,
                block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
                delta(0, type="input_json_delta", partial_json="{oops"),
                stop(0),
            ),
            "tool input of block 0 is not JSON",
        ),
        (
            sse(
                START,
                block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
                delta(0, type="input_json_delta", partial_json="[" * 100_000 + "]" * 100_000),
                stop(0),
            ),
            "tool input of block 0 is not JSON",
        ),
    ],
)
def test_malformed_streams_raise_wire_error(text: str, complaint: str) -> None:
    with pytest.raises(WireError, match=complaint):
        fold_event_stream(text)
