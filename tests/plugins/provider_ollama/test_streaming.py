"""`OllamaProvider.stream`: NDJSON lines as deltas, whole tool calls, cut and failed streams."""

from __future__ import annotations

import json
from typing import Any

import pytest

from neuron_provider_ollama import OllamaProvider
from neuron_turn import output_value
from neuron_turn.loop.events import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.provider import ProviderMessage, ProviderRequest, TextPart, ToolUsePart
from neuron_turn.loop.provider_errors import (
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderServerError,
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

REQUEST = ProviderRequest("qwen3", [ProviderMessage("user", [TextPart("hi")])])
NDJSON = "application/x-ndjson"


def line(content: str = "", *, done: bool = False, **message: Any) -> str:
    body: dict[str, Any] = {
        "model": "qwen3",
        "created_at": "2026-01-01T00:00:00.123456789Z",
        "message": {"role": "assistant", "content": content, **message},
        "done": done,
    }
    if done:
        body |= {"done_reason": "stop", "prompt_eval_count": 12, "eval_count": 7}
    return json.dumps(body) + "\n"


def provider(body: ChunkedBody) -> OllamaProvider:
    return OllamaProvider(
        base_url="http://127.0.0.1:11434", client=client_for(body, content_type=NDJSON)
    )


async def test_text_and_thinking_arrive_line_by_line() -> None:
    body = ChunkedBody([line(thinking="Hm."), line("Hel"), line("lo."), line(done=True)])
    async with provider(body) as p:
        deltas, final = await collect(p.stream(REQUEST))

    assert deltas == [ThinkingDelta("Hm."), TextDelta("Hel"), TextDelta("lo.")]
    assert final.content[-1] == TextPart("Hello.")
    assert (final.usage.input_tokens, final.usage.output_tokens) == (12, 7)


async def test_whole_tool_calls_are_announced_with_the_ids_of_the_final_response() -> None:
    call = {"function": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    body = ChunkedBody([line(tool_calls=[call]), line(done=True)])
    async with provider(body) as p:
        deltas, final = await collect(p.stream(REQUEST))

    [part] = final.content
    assert isinstance(part, ToolUsePart) and part.input == {"a": 1, "b": 2}
    assert deltas == [ToolCallStart(part.id, "add"), ToolCallDelta(part.id, '{"a":1,"b":2}')]
    assert final.stop_reason == "tool_use"


async def test_a_stream_cut_before_its_done_line_is_a_retryable_connection_error() -> None:
    async with provider(ChunkedBody([line("Hel")])) as p:
        with pytest.raises(ProviderConnectionError, match="ended before its final line"):
            await collect(p.stream(REQUEST))


async def test_an_error_line_mid_stream_raises_after_the_deltas_before_it() -> None:
    body = ChunkedBody([line("Hel"), json.dumps({"error": "model crashed"}) + "\n"])
    seen = []
    async with provider(body) as p:
        with pytest.raises(ProviderServerError, match="model crashed"):
            async for event in p.stream(REQUEST):
                seen.append(event)
    assert seen == [TextDelta("Hel")]


async def test_an_error_status_to_a_stream_is_mapped() -> None:
    client = client_for(
        json.dumps({"error": "model 'qwen3' not found"}).encode(),
        status=404,
        content_type="application/json",
    )
    async with OllamaProvider(base_url="http://127.0.0.1:11434", client=client) as p:
        with pytest.raises(ModelNotFoundError):
            await collect(p.stream(REQUEST))


async def test_closing_the_stream_early_closes_the_response() -> None:
    body = ChunkedBody([line("Hel")], hang=True)
    async with provider(body) as p:
        events = p.stream(REQUEST)
        async for event in events:
            assert event == TextDelta("Hel")
            break
        await events.aclose()  # type: ignore[attr-defined]
    assert body.closed.is_set()


async def test_complete_still_folds_the_same_stream() -> None:
    body = ChunkedBody([line("Hel"), line("lo."), line(done=True)])
    client = client_for(body, content_type=NDJSON)
    async with OllamaProvider(base_url="http://127.0.0.1:11434", client=client, stream=True) as p:
        response = await p.complete(REQUEST)
    assert response.content == [TextPart("Hello.")]


async def test_a_typed_turn_yields_its_answer_as_the_format_constrained_text_arrives() -> None:
    body = ChunkedBody([*(line(piece) for piece in PARIS_PIECES), line(done=True)])
    async with provider(body) as p:
        partials, output = await typed_partials(p, "qwen3")

    assert partials == PARIS_AS_IT_GROWS
    assert output_value(output, City) == partials[-1]
