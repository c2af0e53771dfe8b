from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from moneyed import Money

from neuron_provider_ollama import OllamaProvider
from neuron_tool.schema import ToolSchema
from neuron_turn import (
    ModelNotFoundError,
    ProviderMessage,
    ProviderRequest,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from tests.cassettes import CASSETTES, replay

from ._support import chat_body

HERE = CASSETTES / "ollama"
KEY = "ollama-cassette-key-0d1e2f"
PRICES = {"llama3.2": {"input_mtok": "0.10", "output_mtok": "0.40"}}
WEATHER = ToolSchema(
    name="get_weather",
    description="Get the current weather for a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city name, e.g. Paris"}},
        "required": ["city"],
    },
)


def local_provider(**options: Any) -> OllamaProvider:
    return OllamaProvider("llama3.2", base_url="http://localhost:11434", **options)


async def test_text_reply_cassette_replays_with_body_matching() -> None:
    request = ProviderRequest(
        model="llama3.2",
        messages=[ProviderMessage("user", [TextPart("What is the capital of France?")])],
        system="You are a concise assistant.",
        max_tokens=256,
        temperature=0.2,
        extra={"metadata": {"trace_id": "t-1"}},
    )
    with replay(HERE / "text_reply.yaml"):
        async with local_provider(prices=PRICES) as provider:
            response = await provider.complete(request)
    assert list(response.content) == [TextPart("The capital of France is Paris.")]
    assert response.stop_reason == "end_turn"
    assert response.usage == TokenUsage(input_tokens=38, output_tokens=8)
    assert response.model == "llama3.2"
    assert response.cost == Money(Decimal("0.0000070"), "USD")


async def test_tool_loop_cassette_calls_the_tool_then_answers_from_its_result() -> None:
    question = ProviderMessage("user", [TextPart("What is the weather in Paris right now?")])
    with replay(HERE / "tool_loop.yaml"):
        async with local_provider(prices=PRICES) as provider:
            first = await provider.complete(
                ProviderRequest(model="llama3.2", messages=[question], tools=[WEATHER])
            )
            [call] = first.content
            assert isinstance(call, ToolUsePart)
            result = ToolResultPart(call.id, "18 C, partly cloudy, light wind from the west")
            history = [question, ProviderMessage("assistant", first.content)]
            second = await provider.complete(
                ProviderRequest(
                    model="llama3.2",
                    messages=[*history, ProviderMessage("user", [result])],
                    tools=[WEATHER],
                )
            )
    assert (call.name, call.input) == ("get_weather", {"city": "Paris"})
    assert call.id.startswith("call_0_")
    assert first.stop_reason == "tool_use"
    assert first.usage == TokenUsage(171, 17)
    assert second.stop_reason == "end_turn"
    assert second.content == [
        TextPart(
            "It is currently 18 C and partly cloudy in Paris, with a light wind from the west."
        )
    ]
    assert second.usage == TokenUsage(206, 22)
    assert first.cost is not None and first.cost > Money("0", "USD")
    assert second.cost == Money(Decimal("0.0000294"), "USD")


async def test_cassette_reply_costs_zero_usd_without_configured_prices() -> None:
    request = ProviderRequest(
        model="llama3.2",
        messages=[ProviderMessage("user", [TextPart("What is the capital of France?")])],
        system="You are a concise assistant.",
        max_tokens=256,
        temperature=0.2,
    )
    with replay(HERE / "text_reply.yaml"):
        async with local_provider() as provider:
            response = await provider.complete(request)
    assert response.usage.input_tokens > 0
    assert response.cost == Money("0", "USD")


async def test_model_not_found_cassette_maps_to_model_not_found_error() -> None:
    request = ProviderRequest(
        model="llama3.3", messages=[ProviderMessage("user", [TextPart("Hello")])]
    )
    with replay(HERE / "model_not_found.yaml"):
        async with local_provider() as provider:
            with pytest.raises(ModelNotFoundError) as info:
                await provider.complete(request)
    assert info.value.status_code == 404
    assert 'model "llama3.3" not found' in info.value.message
    assert "ollama pull llama3.3" in info.value.message


async def test_replay_fails_when_a_recorded_interaction_is_left_unplayed() -> None:
    question = ProviderMessage("user", [TextPart("What is the weather in Paris right now?")])
    with pytest.raises(AssertionError, match="never requested"):
        with replay(HERE / "tool_loop.yaml"):
            async with local_provider() as provider:
                await provider.complete(
                    ProviderRequest(model="llama3.2", messages=[question], tools=[WEATHER])
                )


@pytest.mark.parametrize("path", sorted(HERE.glob("*.yaml")), ids=lambda p: p.name)
def test_own_cassettes_say_they_were_written_by_hand_and_hold_no_credentials(
    path: Path,
) -> None:
    text = path.read_text()
    assert text.startswith("# Written by hand from the Ollama API reference")
    assert "NEURON_RECORD=1" in text.splitlines()[0]
    assert "authorization" not in text.lower()
    assert "bearer" not in text.lower()
    for interaction in yaml.safe_load(text)["interactions"]:
        assert interaction["request"]["uri"].startswith("http://localhost:11434/api/chat")


async def test_recording_filters_the_api_key_out_of_the_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_RECORD", "1")
    path = tmp_path / "recorded.yaml"

    def server(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {KEY}"
        return httpx.Response(200, json=chat_body("Hi there."))

    client = httpx.AsyncClient(transport=httpx.MockTransport(server))
    request = ProviderRequest(
        model="llama3.2", messages=[ProviderMessage("user", [TextPart("Hi")])]
    )
    with replay(path):
        provider = OllamaProvider(
            "llama3.2", base_url="https://ollama.com", api_key=KEY, client=client
        )
        await provider.complete(request)
    written = path.read_text()
    [interaction] = yaml.safe_load(written)["interactions"]
    assert "Hi there." in interaction["response"]["body"]["string"]
    assert "authorization" not in {name.lower() for name in interaction["request"]["headers"]}
    assert KEY not in written
