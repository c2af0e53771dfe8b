"""`AnthropicProvider.stream`: deltas as the events arrive, errors before and after the 200."""

from __future__ import annotations

import json

import httpx
import pytest

from neuron_provider_anthropic import AnthropicProvider
from neuron_turn import output_value
from neuron_turn.loop.events import TextDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.provider import ProviderRequest, TextPart, ToolUsePart
from neuron_turn.loop.provider_errors import (
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderOverloadedError,
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

from ._support import API_KEY, MODEL, message_json, user
from .test_stream import END, START, block_start, delta, message_delta, sse, stop

REQUEST = ProviderRequest(model=MODEL, messages=[user("hi")])

TEXT_AND_TOOL = [
    sse(START),
    sse(block_start(0, {"type": "text", "text": ""})),
    sse(delta(0, type="text_delta", text="Let me ")),
    sse(delta(0, type="text_delta", text="add.")),
    sse(stop(0)),
    sse(block_start(1, {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}})),
    sse(delta(1, type="input_json_delta", partial_json='{"a": 1,')),
    sse(delta(1, type="input_json_delta", partial_json=' "b": 2}')),
    sse(stop(1)),
    sse(message_delta("tool_use", output_tokens=17)),
    sse(END),
]


def provider(client: httpx.AsyncClient) -> AnthropicProvider:
    return AnthropicProvider(MODEL, api_key=API_KEY, client=client)


async def test_stream_yields_each_fragment_then_the_whole_response() -> None:
    async with provider(client_for(ChunkedBody(TEXT_AND_TOOL))) as p:
        deltas, final = await collect(p.stream(REQUEST))

    assert deltas == [
        TextDelta("Let me "),
        TextDelta("add."),
        ToolCallStart("toolu_1", "add"),
        ToolCallDelta("toolu_1", '{"a": 1,'),
        ToolCallDelta("toolu_1", ' "b": 2}'),
    ]
    assert final.content == (
        TextPart("Let me add."),
        ToolUsePart("toolu_1", "add", {"a": 1, "b": 2}),
    )
    assert final.stop_reason == "tool_use"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (49, 17)


async def test_stream_sends_stream_true_even_when_extra_says_false() -> None:
    bodies: list[dict[str, object]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content="".join(TEXT_AND_TOOL)
        )

    client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    request = ProviderRequest(model=MODEL, messages=[user("hi")], extra={"stream": False})
    async with provider(client) as p:
        await collect(p.stream(request))

    assert bodies[0]["stream"] is True


async def test_a_404_json_answer_to_a_streaming_request_is_model_not_found() -> None:
    body = json.dumps(
        {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-x"}}
    ).encode()
    async with provider(client_for(body, status=404, content_type="application/json")) as p:
        with pytest.raises(ModelNotFoundError, match="model 'claude-haiku-4-5' not found"):
            await collect(p.stream(REQUEST))


async def test_an_error_event_after_the_200_raises_after_the_deltas_before_it() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    chunks = [*TEXT_AND_TOOL[:3], sse(error)]
    seen = []
    async with provider(client_for(ChunkedBody(chunks))) as p:
        with pytest.raises(ProviderOverloadedError, match="Overloaded") as caught:
            async for event in p.stream(REQUEST):
                seen.append(event)

    assert seen == [TextDelta("Let me ")]
    assert caught.value.retryable


async def test_a_stream_that_ends_before_message_stop_is_a_retryable_cut() -> None:
    async with provider(client_for(ChunkedBody(TEXT_AND_TOOL[:4]))) as p:
        with pytest.raises(ProviderConnectionError, match=r"cut off.*after 4 event"):
            await collect(p.stream(REQUEST))


async def test_a_connection_dropped_mid_body_is_a_retryable_connection_error() -> None:
    dropped = httpx.RemoteProtocolError("peer closed connection without sending complete body")
    async with provider(client_for(ChunkedBody(TEXT_AND_TOOL[:4], fail=dropped))) as p:
        with pytest.raises(ProviderConnectionError, match="peer closed"):
            await collect(p.stream(REQUEST))


async def test_closing_the_stream_early_closes_the_response() -> None:
    body = ChunkedBody(TEXT_AND_TOOL[:3], hang=True)
    async with provider(client_for(body)) as p:
        events = p.stream(REQUEST)
        async for event in events:
            assert event == TextDelta("Let me ")
            break
        await events.aclose()  # type: ignore[attr-defined]

    assert body.closed.is_set()


async def test_a_gateway_answering_json_to_a_stream_gives_one_delta_and_the_response() -> None:
    body = json.dumps(message_json()).encode()
    async with provider(client_for(body, content_type="application/json")) as p:
        deltas, final = await collect(p.stream(REQUEST))

    assert deltas == [TextDelta("Hello.")]
    assert final.content == (TextPart("Hello."),)


async def test_a_streamed_answer_echoing_the_key_carries_it_nowhere() -> None:
    chunks = [
        sse(START),
        sse(block_start(0, {"type": "text", "text": ""})),
        sse(delta(0, type="text_delta", text=f"your key is {API_KEY}")),
        sse(stop(0)),
        sse(message_delta("end_turn", output_tokens=9)),
        sse(END),
    ]
    async with provider(client_for(ChunkedBody(chunks))) as p:
        deltas, final = await collect(p.stream(REQUEST))

    assert API_KEY not in repr(deltas) + repr(final)


async def test_a_typed_turn_yields_its_answer_as_the_final_answer_calls_json_arrives() -> None:
    answer = [
        sse(START),
        sse(block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "final_answer"})),
        *(sse(delta(0, type="input_json_delta", partial_json=piece)) for piece in PARIS_PIECES),
        sse(stop(0)),
        sse(message_delta("tool_use", output_tokens=30)),
        sse(END),
    ]
    async with provider(client_for(ChunkedBody(answer))) as p:
        partials, output = await typed_partials(p, MODEL)

    assert partials == PARIS_AS_IT_GROWS
    assert output_value(output, City) == partials[-1]
