"""`OpenAIProvider.stream`: chat completion chunks as deltas, the shapes compatible servers send."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from neuron_provider_openai import OpenAIProvider
from neuron_turn import output_value
from neuron_turn.loop.events import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.provider import (
    ProviderMessage,
    ProviderRequest,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderConnectionError,
    ProviderResponseError,
    RateLimitError,
)
from tests.plugins.chunked import (
    PARIS_AS_IT_GROWS,
    PARIS_PIECES,
    ChunkedBody,
    City,
    client_for,
    collect,
    typed_partials,
)

REQUEST = ProviderRequest("gpt-4o-mini", [ProviderMessage("user", [TextPart("hi")])])


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-mini",
        "choices": choices,
    }
    return f"data: {json.dumps(body | extra)}\n\n"


def call_chunk(
    index: int, *, id: str | None = None, name: str | None = None, args: str = ""
) -> str:
    function: dict[str, Any] = {"arguments": args}
    if name is not None:
        function["name"] = name
    call: dict[str, Any] = {"index": index, "function": function}
    if id is not None:
        call["id"] = id
    return chunk({"tool_calls": [call]})


USAGE = chunk(usage={"prompt_tokens": 54, "completion_tokens": 20, "total_tokens": 74})
DONE = "data: [DONE]\n\n"


def provider(client: httpx.AsyncClient) -> OpenAIProvider:
    return OpenAIProvider("gpt-4o-mini", api_key="sk-test", client=client)


async def test_text_arrives_as_deltas_and_usage_comes_from_the_last_chunk() -> None:
    chunks = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hel"}),
        chunk({"content": "lo."}),
        chunk({}, finish="stop"),
        USAGE,
        DONE,
    ]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        deltas, final = await collect(p.stream(REQUEST))

    assert deltas == [TextDelta("Hel"), TextDelta("lo.")]
    assert final.content == [TextPart("Hello.")]
    assert final.stop_reason == "end_turn"
    assert final.usage == TokenUsage(54, 20)


async def test_stream_asks_for_events_with_usage() -> None:
    bodies: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        text = chunk({"content": "x"}, finish="stop") + DONE
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=text)

    async with provider(httpx.AsyncClient(transport=httpx.MockTransport(answer))) as p:
        await collect(p.stream(REQUEST))

    assert bodies[0]["stream"] is True
    assert bodies[0]["stream_options"] == {"include_usage": True}


async def test_parallel_tool_calls_are_told_apart_by_index_alone() -> None:
    chunks = [
        call_chunk(0, id="call_a", name="lookup", args=""),
        call_chunk(1, id="call_b", name="weather", args='{"ci'),
        call_chunk(0, args='{"q": '),
        call_chunk(1, args='ty": "Paris"}'),
        call_chunk(0, args='"x"}'),
        chunk({}, finish="tool_calls"),
        USAGE,
        DONE,
    ]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        deltas, final = await collect(p.stream(REQUEST))

    assert deltas == [
        ToolCallStart("call_a", "lookup"),
        ToolCallStart("call_b", "weather"),
        ToolCallDelta("call_b", '{"ci'),
        ToolCallDelta("call_a", '{"q": '),
        ToolCallDelta("call_b", 'ty": "Paris"}'),
        ToolCallDelta("call_a", '"x"}'),
    ]
    assert final.content == [
        ToolUsePart("call_a", "lookup", {"q": "x"}),
        ToolUsePart("call_b", "weather", {"city": "Paris"}),
    ]
    assert final.stop_reason == "tool_use"


async def test_whole_calls_sent_one_after_another_at_index_0_stay_apart() -> None:
    # Some OpenAI-compatible servers send each call whole, every one at index 0.
    chunks = [
        call_chunk(0, id="call_a", name="lookup", args='{"q": "x"}'),
        call_chunk(0, id="call_b", name="weather", args='{"city": "Paris"}'),
        chunk({}, finish="tool_calls"),
        DONE,
    ]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        deltas, final = await collect(p.stream(REQUEST))

    assert final.content == [
        ToolUsePart("call_a", "lookup", {"q": "x"}),
        ToolUsePart("call_b", "weather", {"city": "Paris"}),
    ]
    assert deltas[2:] == [
        ToolCallStart("call_b", "weather"),
        ToolCallDelta("call_b", '{"city": "Paris"}'),
    ]


async def test_a_server_resending_name_and_a_fresh_id_on_each_chunk_is_read_as_one_call() -> None:
    chunks = [
        call_chunk(0, id="call_1", name="lookup", args='{"q": '),
        call_chunk(0, id="call_2", name="lookup", args='"x"}'),
        chunk({}, finish="tool_calls"),
        DONE,
    ]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        _, final = await collect(p.stream(REQUEST))

    assert final.content == [ToolUsePart("call_1", "lookup", {"q": "x"})]


async def test_a_tool_call_ended_with_finish_reason_stop_is_still_a_tool_call() -> None:
    # Ollama's OpenAI-compatible endpoint: the whole call in one chunk, then "stop".
    chunks = [
        chunk({"reasoning": "I should add."}),
        call_chunk(0, id="call_x", name="add", args='{"a":1,"b":2}'),
        chunk({"content": ""}, finish="stop"),
        DONE,
    ]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        deltas, final = await collect(p.stream(REQUEST))

    assert deltas == [
        ThinkingDelta("I should add."),
        ToolCallStart("call_x", "add"),
        ToolCallDelta("call_x", '{"a":1,"b":2}'),
    ]
    assert final.stop_reason == "tool_use"
    assert final.content == [
        ThinkingPart("I should add."),
        ToolUsePart("call_x", "add", {"a": 1, "b": 2}),
    ]


async def test_a_call_without_an_id_gets_one_its_deltas_and_its_part_share() -> None:
    chunks = [call_chunk(0, name="add", args='{"a":1}'), chunk({}, finish="tool_calls"), DONE]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        deltas, final = await collect(p.stream(REQUEST))

    start = deltas[0]
    assert isinstance(start, ToolCallStart) and start.id.startswith("call_")
    part = final.content[0]
    assert isinstance(part, ToolUsePart) and part.id == start.id


async def test_a_stream_cut_before_its_finish_is_a_retryable_connection_error() -> None:
    chunks = [chunk({"content": "Hel"})]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        with pytest.raises(ProviderConnectionError, match="cut off after 1 chunk"):
            await collect(p.stream(REQUEST))


async def test_complete_on_a_cut_stream_fails_the_same_way() -> None:
    client = client_for(ChunkedBody([chunk({"content": "Hel"})]))
    streaming = OpenAIProvider("gpt-4o-mini", api_key="sk-test", client=client, stream=True)
    with pytest.raises(ProviderConnectionError, match="cut off"):
        await streaming.complete(REQUEST)


async def test_an_error_object_in_the_stream_raises_after_the_deltas_before_it() -> None:
    error = 'data: {"error": {"code": 429, "message": "slow down"}}\n\n'
    seen = []
    async with provider(client_for(ChunkedBody([chunk({"content": "Hel"}), error]))) as p:
        with pytest.raises(RateLimitError, match="slow down"):
            async for event in p.stream(REQUEST):
                seen.append(event)

    assert seen == [TextDelta("Hel")]


async def test_an_error_status_to_a_streaming_request_is_mapped() -> None:
    body = json.dumps({"error": {"message": "bad field", "type": "invalid_request_error"}})
    client = client_for(body.encode(), status=400, content_type="application/json")
    async with provider(client) as p:
        with pytest.raises(InvalidRequestError, match="bad field"):
            await collect(p.stream(REQUEST))


async def test_closing_the_stream_early_closes_the_response() -> None:
    body = ChunkedBody([chunk({"content": "Hel"})], hang=True)
    async with provider(client_for(body)) as p:
        events = p.stream(REQUEST)
        async for event in events:
            assert event == TextDelta("Hel")
            break
        await events.aclose()  # type: ignore[attr-defined]

    assert body.closed.is_set()


async def test_a_chunk_nested_past_what_python_parses_is_a_response_error() -> None:
    deep = "data: " + "[" * 100_000 + "]" * 100_000 + "\n\n"
    async with provider(client_for(ChunkedBody([deep]))) as p:
        with pytest.raises(ProviderResponseError, match="JSON event data"):
            await collect(p.stream(REQUEST))


async def test_a_streamed_answer_echoing_the_key_carries_it_nowhere() -> None:
    chunks = [chunk({"content": "your key is sk-test"}), chunk({}, finish="stop"), DONE]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        deltas, final = await collect(p.stream(REQUEST))

    assert "sk-test" not in repr(deltas) + repr(final)


async def test_a_typed_turn_yields_its_answer_as_the_native_json_text_arrives() -> None:
    chunks = [
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"content": piece}) for piece in PARIS_PIECES),
        chunk({}, finish="stop"),
        USAGE,
        DONE,
    ]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        partials, output = await typed_partials(p, "gpt-4o-mini")

    assert partials == PARIS_AS_IT_GROWS
    assert output_value(output, City) == partials[-1]
