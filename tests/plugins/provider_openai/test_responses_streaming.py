"""`OpenAIResponsesProvider.stream`: Responses API events as the loop's deltas, then the answer."""

from __future__ import annotations

import httpx
import pytest

from neuron_turn.loop.events import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.provider import ProviderResponse, TextPart, TokenUsage, ToolUsePart
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderConnectionError,
    ProviderResponseError,
    ProviderServerError,
    RateLimitError,
)

from ._responses_support import function_call, message, mocked, reasoning, response, sse, usage
from ._support import KEY, json_response, request

CREATED = {"type": "response.created", "response": response(status="in_progress", output=[])}


def text_events(*pieces: str) -> list[dict[str, object]]:
    item = message("".join(pieces))
    added = {**item, "status": "in_progress", "content": []}
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        *(
            {
                "type": "response.output_text.delta",
                "item_id": "msg_1",
                "output_index": 0,
                "content_index": 0,
                "delta": piece,
            }
            for piece in pieces
        ),
        {"type": "response.output_item.done", "output_index": 0, "item": item},
    ]


def call_events(index: int, call_id: str, *pieces: str) -> list[dict[str, object]]:
    item = function_call(call_id, "get_weather", "".join(pieces), item_id=f"fc_{index}")
    return [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "arguments": "", "status": "in_progress"},
        },
        *(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": f"fc_{index}",
                "output_index": index,
                "delta": piece,
            }
            for piece in pieces
        ),
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


async def collect(provider, req=None) -> tuple[list[object], ProviderResponse]:  # type: ignore[no-untyped-def]
    events = [event async for event in provider.stream(req or request())]
    *deltas, last = events
    assert isinstance(last, ProviderResponse)
    return deltas, last


async def test_text_arrives_as_deltas_and_the_answer_comes_from_the_completed_event() -> None:
    done = {
        "type": "response.completed",
        "response": response(message("Hello there"), usage=usage(12, 3)),
    }
    provider, recorder = mocked(sse(CREATED, *text_events("Hello", " there"), done))
    deltas, answer = await collect(provider)
    assert recorder.body["stream"] is True
    assert deltas == [TextDelta("Hello"), TextDelta(" there")]
    assert answer.content == [TextPart("Hello there")]
    assert answer.usage == TokenUsage(12, 3, 0)


async def test_function_calls_start_with_their_call_id_and_stream_arguments_by_output_index() -> (
    None
):
    items = [
        function_call("call_a", "get_weather", '{"city":"Paris"}'),
        function_call("call_b", "get_weather", '{"city":"Rome"}', item_id="fc_2"),
    ]
    done = {"type": "response.completed", "response": response(*items)}
    events = [
        *call_events(0, "call_a", '{"city":', '"Paris"}'),
        *call_events(1, "call_b", '{"city":"Rome"}'),
    ]
    provider, _ = mocked(sse(CREATED, *events, done))
    deltas, answer = await collect(provider)
    assert deltas == [
        ToolCallStart("call_a", "get_weather"),
        ToolCallDelta("call_a", '{"city":'),
        ToolCallDelta("call_a", '"Paris"}'),
        ToolCallStart("call_b", "get_weather"),
        ToolCallDelta("call_b", '{"city":"Rome"}'),
    ]
    assert answer.content == [
        ToolUsePart("call_a", "get_weather", {"city": "Paris"}),
        ToolUsePart("call_b", "get_weather", {"city": "Rome"}),
    ]
    assert answer.stop_reason == "tool_use"


async def test_reasoning_summary_deltas_are_thinking_deltas() -> None:
    item = reasoning("Check the sky.")
    events = [
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "summary": []}},
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 0,
            "delta": "Check the sky.",
        },
        {"type": "response.output_item.done", "output_index": 0, "item": item},
    ]
    done = {"type": "response.completed", "response": response(item, message("Blue."))}
    provider, _ = mocked(sse(*events, done))
    deltas, answer = await collect(provider)
    assert deltas == [ThinkingDelta("Check the sky.")]
    assert answer.content[0].thinking == "Check the sky."  # type: ignore[union-attr]


async def test_an_empty_output_in_the_last_event_is_filled_from_the_finished_items() -> None:
    done = {"type": "response.completed", "response": response(output=[])}
    done["response"]["output"] = []  # type: ignore[index]
    provider, _ = mocked(sse(*call_events(0, "", '{"city":"Oslo"}'), done))
    deltas, answer = await collect(provider)
    start = deltas[0]
    assert isinstance(start, ToolCallStart) and start.id.startswith("call_")
    assert answer.content == [ToolUsePart(start.id, "get_weather", {"city": "Oslo"})]


async def test_incomplete_stream_ends_with_max_tokens() -> None:
    done = {
        "type": "response.incomplete",
        "response": response(
            message("Once upon"),
            status="incomplete",
            incomplete_details={"reason": "max_output_tokens"},
        ),
    }
    provider, _ = mocked(sse(*text_events("Once upon"), done))
    _, answer = await collect(provider)
    assert (answer.stop_reason, answer.truncated) == ("max_tokens", True)


async def test_a_stream_cut_before_its_last_event_is_a_retryable_connection_error() -> None:
    provider, _ = mocked(sse(CREATED, *text_events("Hel")))
    with pytest.raises(ProviderConnectionError, match="cut off"):
        await collect(provider)


@pytest.mark.parametrize(
    ("event", "error"),
    [
        (
            {
                "type": "response.failed",
                "response": response(
                    status="failed",
                    output=[],
                    error={"code": "rate_limit_exceeded", "message": "Slow down"},
                ),
            },
            RateLimitError,
        ),
        (
            {
                "type": "response.failed",
                "response": response(
                    status="failed", error={"code": "server_error", "message": "Oops"}
                ),
            },
            ProviderServerError,
        ),
        ({"type": "error", "code": "invalid_prompt", "message": "Bad", "param": None}, None),
        ({"type": "error", "error": {"type": "server_error", "message": "Down"}}, None),
    ],
)
async def test_failed_and_error_events_raise_the_mapped_error_after_earlier_deltas(
    event: dict[str, object], error: type[Exception] | None
) -> None:
    provider, _ = mocked(sse(*text_events("partial"), event))
    seen: list[object] = []
    expected = error or (InvalidRequestError if event.get("code") else ProviderServerError)
    with pytest.raises(expected):
        async for item in provider.stream(request()):
            seen.append(item)
    assert seen == [TextDelta("partial")]


async def test_a_data_line_that_is_not_json_is_a_response_error() -> None:
    bad = httpx.Response(
        200, content=b"data: {not json\n\n", headers={"content-type": "text/event-stream"}
    )
    provider, _ = mocked(bad)
    with pytest.raises(ProviderResponseError, match="JSON event data"):
        await collect(provider)


async def test_an_empty_stream_is_a_response_error() -> None:
    empty = httpx.Response(200, content=b"", headers={"content-type": "text/event-stream"})
    provider, _ = mocked(empty)
    with pytest.raises(ProviderResponseError, match="a stream of Responses API events"):
        await collect(provider)


async def test_a_server_answering_json_to_a_stream_request_is_read_whole() -> None:
    provider, _ = mocked(json_response(response(message("Whole."))))
    deltas, answer = await collect(provider)
    assert deltas == [TextDelta("Whole.")]
    assert answer.content == [TextPart("Whole.")]


async def test_the_key_echoed_in_a_stream_is_redacted() -> None:
    done = {"type": "response.completed", "response": response(message(f"key {KEY}"))}
    provider, _ = mocked(sse(*text_events(f"key {KEY}"), done))
    deltas, answer = await collect(provider)
    assert KEY not in repr(deltas) and KEY not in repr(answer)
