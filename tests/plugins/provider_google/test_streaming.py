"""`GoogleProvider.stream`: `alt=sse` chunks as the loop's deltas, then the answer."""

from __future__ import annotations

import httpx
import pytest

from neuron_turn.loop.events import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.provider import (
    ProviderResponse,
    RawPart,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderConnectionError,
    ProviderOverloadedError,
    ProviderResponseError,
    RateLimitError,
)

from ._support import (
    KEY,
    STREAM_URL,
    call,
    json_response,
    mocked,
    request,
    response,
    sse,
    text,
    usage,
)


def chunk(*parts: dict[str, object], finish: str | None = None, **fields: object):
    """One streamed chunk: a response holding the next parts (no finishReason until the last)."""
    body = response(*parts, finish=finish, **fields)
    if not parts:
        body["candidates"][0]["content"]["parts"] = []
    return body


async def collect(provider, req=None) -> tuple[list[object], ProviderResponse]:  # type: ignore[no-untyped-def]
    events = [event async for event in provider.stream(req or request())]
    *deltas, last = events
    assert isinstance(last, ProviderResponse)
    return deltas, last


async def test_text_arrives_as_deltas_and_the_last_chunk_gives_stop_and_usage() -> None:
    provider, recorder = mocked(
        sse(
            chunk(text("Hello")),
            chunk(text(" there")),
            chunk(text("!"), finish="STOP", usageMetadata=usage(12, 3)),
        )
    )
    deltas, answer = await collect(provider)
    assert str(recorder.requests[0].url) == STREAM_URL
    assert recorder.requests[0].headers["x-goog-api-key"] == KEY
    assert deltas == [TextDelta("Hello"), TextDelta(" there"), TextDelta("!")]
    assert answer.content == [TextPart("Hello there!")]
    assert (answer.stop_reason, answer.usage) == ("end_turn", TokenUsage(12, 3))


async def test_the_final_answer_equals_what_complete_gives_for_the_same_answer() -> None:
    whole = response(
        text("Let me check.", thought=True),
        call("get_weather", {"city": "Paris"}, thoughtSignature="sig-1"),
        call("get_weather", {"city": "Rome"}),
    )
    streamed = sse(
        chunk(text("Let me ", thought=True)),
        chunk(text("check.", thought=True)),
        chunk(call("get_weather", {"city": "Paris"}, thoughtSignature="sig-1")),
        chunk(call("get_weather", {"city": "Rome"}), finish="STOP"),
    )
    provider, _ = mocked(json_response(whole))
    completed = await provider.complete(request())
    provider, _ = mocked(streamed)
    deltas, answer = await collect(provider)
    assert answer.content == completed.content
    assert answer.stop_reason == completed.stop_reason == "tool_use"
    paris, rome = (part for part in answer.content if isinstance(part, ToolUsePart))
    assert deltas == [
        ThinkingDelta("Let me "),
        ThinkingDelta("check."),
        ToolCallStart(paris.id, "get_weather"),
        ToolCallDelta(paris.id, '{"city":"Paris"}'),
        ToolCallStart(rome.id, "get_weather"),
        ToolCallDelta(rome.id, '{"city":"Rome"}'),
    ]


async def test_a_call_keeps_the_id_the_api_gave_it() -> None:
    provider, _ = mocked(sse(chunk(call("f", {}, id="fc-7"), finish="STOP")))
    deltas, answer = await collect(provider)
    assert deltas[0] == ToolCallStart("fc-7", "f")
    assert answer.content == [ToolUsePart("fc-7", "f", {})]


async def test_a_signature_streamed_alone_stays_a_part_of_its_own_after_the_text() -> None:
    provider, _ = mocked(
        sse(
            chunk(text("The answer")),
            chunk(text(" is 4.")),
            chunk(text("", thoughtSignature="sig-end"), finish="STOP"),
        )
    )
    deltas, answer = await collect(provider)
    assert deltas == [TextDelta("The answer"), TextDelta(" is 4.")]
    assert answer.content == [
        TextPart("The answer is 4."),
        RawPart("google", {"text": "", "thoughtSignature": "sig-end"}),
    ]


async def test_a_signed_text_piece_is_never_merged_with_the_next() -> None:
    provider, _ = mocked(
        sse(chunk(text("A", thoughtSignature="s")), chunk(text("B"), finish="STOP"))
    )
    _, answer = await collect(provider)
    assert answer.content == [
        RawPart("google", {"thoughtSignature": "s"}),
        TextPart("A"),
        TextPart("B"),
    ]


async def test_thought_and_answer_text_stay_apart() -> None:
    provider, _ = mocked(sse(chunk(text("Hmm.", thought=True)), chunk(text("Yes."), finish="STOP")))
    deltas, answer = await collect(provider)
    assert deltas == [ThinkingDelta("Hmm."), TextDelta("Yes.")]
    assert answer.content == [ThinkingPart("Hmm."), TextPart("Yes.")]


async def test_a_stream_ending_at_max_tokens_is_truncated() -> None:
    provider, _ = mocked(sse(chunk(text("Once upon")), chunk(finish="MAX_TOKENS")))
    _, answer = await collect(provider)
    assert (answer.stop_reason, answer.truncated) == ("max_tokens", True)


async def test_a_stream_cut_before_its_finish_reason_is_a_retryable_connection_error() -> None:
    provider, _ = mocked(sse(chunk(text("Hel"))))
    with pytest.raises(ProviderConnectionError, match="cut off after 1 chunk"):
        await collect(provider)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ({"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}, RateLimitError),
        ({"code": 503, "message": "Overloaded", "status": "UNAVAILABLE"}, ProviderOverloadedError),
        ({"message": "Bad", "status": "INVALID_ARGUMENT"}, InvalidRequestError),
    ],
)
async def test_an_error_event_raises_the_mapped_error_after_earlier_deltas(
    error: dict[str, object], expected: type[Exception]
) -> None:
    provider, _ = mocked(sse(chunk(text("partial")), {"error": error}))
    seen: list[object] = []
    with pytest.raises(expected):
        async for item in provider.stream(request()):
            seen.append(item)
    assert seen == [TextDelta("partial")]


async def test_a_malformed_call_at_the_end_of_a_stream_is_a_response_error() -> None:
    provider, _ = mocked(sse(chunk(text("Let me")), chunk(finish="MALFORMED_FUNCTION_CALL")))
    with pytest.raises(ProviderResponseError, match="MALFORMED_FUNCTION_CALL"):
        await collect(provider)


async def test_a_data_line_that_is_not_json_is_a_response_error() -> None:
    bad = httpx.Response(
        200, content=b"data: {not json\r\n\r\n", headers={"content-type": "text/event-stream"}
    )
    provider, _ = mocked(bad)
    with pytest.raises(ProviderResponseError, match="JSON event data"):
        await collect(provider)


async def test_an_empty_stream_is_a_response_error() -> None:
    empty = httpx.Response(200, content=b"", headers={"content-type": "text/event-stream"})
    provider, _ = mocked(empty)
    with pytest.raises(ProviderResponseError, match="a stream of GenerateContentResponse"):
        await collect(provider)


async def test_a_last_event_without_its_blank_line_is_still_read() -> None:
    body = sse(chunk(text("Hi"), finish="STOP")).content.rstrip(b"\r\n")
    provider, _ = mocked(
        httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})
    )
    _, answer = await collect(provider)
    assert answer.content == [TextPart("Hi")]


async def test_a_server_answering_json_to_a_stream_request_is_read_whole() -> None:
    provider, _ = mocked(json_response(response(text("Whole."))))
    deltas, answer = await collect(provider)
    assert deltas == [TextDelta("Whole.")]
    assert answer.content == [TextPart("Whole.")]


async def test_a_json_array_of_chunks_is_folded_as_a_stream() -> None:
    chunks = [chunk(text("Hel")), chunk(text("lo"), finish="STOP")]
    provider, _ = mocked(json_response(chunks))
    deltas, answer = await collect(provider)
    assert deltas == [TextDelta("Hello")]  # read whole, so handed on whole
    assert answer.content == [TextPart("Hello")]


async def test_an_http_error_before_the_stream_is_mapped() -> None:
    body = {"error": {"code": 429, "message": "Slow down", "status": "RESOURCE_EXHAUSTED"}}
    provider, _ = mocked(json_response(body, 429, **{"retry-after": "3"}))
    with pytest.raises(RateLimitError) as caught:
        await collect(provider)
    assert caught.value.retry_after == 3.0


async def test_the_key_echoed_in_a_stream_is_redacted() -> None:
    provider, _ = mocked(sse(chunk(text(f"key {KEY}"), finish="STOP")))
    deltas, answer = await collect(provider)
    assert KEY not in repr(deltas) and KEY not in repr(answer)


async def test_closing_the_stream_early_closes_the_response() -> None:
    closed: list[bool] = []

    class Tracking(httpx.AsyncByteStream):
        async def __aiter__(self):  # type: ignore[no-untyped-def]
            yield b'data: {"candidates":[{"content":{"parts":[{"text":"a"}]}}]}\r\n\r\n'
            yield b'data: {"candidates":[{"content":{"parts":[{"text":"b"}]}}]}\r\n\r\n'

        async def aclose(self) -> None:
            closed.append(True)

    answer = httpx.Response(200, stream=Tracking(), headers={"content-type": "text/event-stream"})
    provider, _ = mocked(answer)
    stream = provider.stream(request())
    assert await anext(stream) == TextDelta("a")
    await stream.aclose()  # type: ignore[attr-defined]
    assert closed == [True]
