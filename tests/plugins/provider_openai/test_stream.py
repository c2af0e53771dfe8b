"""The `stream=True` option: server-sent events assembled into one response."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from neuron_provider_openai._stream import MalformedStreamError, StreamAccumulator, StreamError
from neuron_turn.loop.provider import TextPart, TokenUsage, ToolUsePart
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderResponseError,
    ProviderServerError,
    RateLimitError,
)

from ._support import completion, json_response, mocked, request


def chunk(delta: dict[str, Any], finish_reason: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-s",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        "usage": None,
        **fields,
    }


USAGE_CHUNK = {
    "id": "chatcmpl-s",
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [],
    "usage": {
        "prompt_tokens": 53,
        "completion_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 0},
    },
}


def sse(*chunks: object, done: bool = True) -> httpx.Response:
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return httpx.Response(
        200, content="".join(lines).encode(), headers={"content-type": "text/event-stream"}
    )


TOOL_STREAM = (
    chunk(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_capital", "arguments": ""},
                }
            ],
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"coun'}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'try":"UK"}'}}]}),
    chunk(
        {
            "tool_calls": [
                {"index": 1, "id": "call_2", "function": {"name": "now", "arguments": "{}"}}
            ]
        }
    ),
    chunk({}, "tool_calls"),
    USAGE_CHUNK,
)


async def test_streamed_tool_calls_are_assembled_by_index() -> None:
    provider, recorder = mocked(sse(*TOOL_STREAM), stream=True)
    response = await provider.complete(request())
    assert recorder.body["stream"] is True
    assert recorder.body["stream_options"] == {"include_usage": True}
    assert response.content == [
        ToolUsePart("call_1", "get_capital", {"country": "UK"}),
        ToolUsePart("call_2", "now", {}),
    ]
    assert response.stop_reason == "tool_use"
    assert response.usage == TokenUsage(53, 15, 0)
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert response.cost is not None


async def test_streamed_text_is_concatenated() -> None:
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in ("The", " capital", " is", " London.")]
    chunks += [chunk({}, "stop"), USAGE_CHUNK]
    provider, _ = mocked(sse(*chunks), stream=True)
    response = await provider.complete(request())
    assert response.content == [TextPart("The capital is London.")]
    assert response.stop_reason == "end_turn"


async def test_stream_can_be_asked_for_per_request_through_extra() -> None:
    provider, recorder = mocked(sse(chunk({"content": "Hi"}, "stop")))
    response = await provider.complete(request(extra={"stream": True}))
    assert recorder.body["stream_options"] == {"include_usage": True}
    assert response.content == [TextPart("Hi")]
    assert response.usage == TokenUsage()


async def test_server_that_ignores_stream_and_answers_json_is_read() -> None:
    provider, _ = mocked(json_response(completion("Whole.")), stream=True)
    assert (await provider.complete(request())).content == [TextPart("Whole.")]


async def test_error_status_in_stream_mode_is_mapped() -> None:
    body = {"error": {"message": "slow down", "type": "requests", "code": None}}
    provider, _ = mocked(json_response(body, 429, **{"retry-after": "2"}), stream=True)
    with pytest.raises(RateLimitError) as info:
        await provider.complete(request())
    assert info.value.retry_after == 2.0
    assert "slow down" in info.value.message


async def test_error_event_inside_a_stream_is_mapped_by_its_code() -> None:
    events = (chunk({"content": "Hel"}), {"error": {"code": 400, "message": "context too long"}})
    provider, _ = mocked(sse(*events, done=False), stream=True)
    with pytest.raises(InvalidRequestError, match="context too long"):
        await provider.complete(request())


async def test_error_event_without_a_code_is_a_server_error() -> None:
    provider, _ = mocked(sse({"error": {"message": "upstream died"}}, done=False), stream=True)
    with pytest.raises(ProviderServerError, match="upstream died"):
        await provider.complete(request())


async def test_non_json_event_is_a_response_error() -> None:
    broken = httpx.Response(
        200, content=b"data: {not json\n\n", headers={"content-type": "text/event-stream"}
    )
    provider, _ = mocked(broken, stream=True)
    with pytest.raises(ProviderResponseError, match="not json"):
        await provider.complete(request())


async def test_empty_stream_is_a_response_error() -> None:
    empty = httpx.Response(
        200, content=b"data: [DONE]\n\n", headers={"content-type": "text/event-stream"}
    )
    provider, _ = mocked(empty, stream=True)
    with pytest.raises(ProviderResponseError, match="stream"):
        await provider.complete(request())


def test_accumulator_skips_comments_event_lines_and_blanks() -> None:
    acc = StreamAccumulator()
    for line in (
        ": ping",
        "event: message",
        "",
        f"data: {json.dumps(chunk({'content': 'x'}))}",
        "data: [DONE]",
    ):
        acc.feed_line(line)
    assert (acc.content, acc.chunks, acc.done) == ("x", 1, True)


def test_accumulator_collects_reasoning_and_refusal_deltas() -> None:
    acc = StreamAccumulator()
    acc.feed_chunk(chunk({"reasoning_content": "think "}))
    acc.feed_chunk(chunk({"reasoning": "more"}))
    acc.feed_chunk(chunk({"refusal": "No."}, "stop"))
    message = acc.body()["choices"][0]["message"]  # type: ignore[index]
    assert message["reasoning_content"] == "think more"
    assert message["refusal"] == "No."


def test_accumulator_raises_on_error_and_bad_json() -> None:
    with pytest.raises(StreamError):
        StreamAccumulator().feed_line('data: {"error": "boom"}')
    with pytest.raises(MalformedStreamError):
        StreamAccumulator().feed_line("data: {")
