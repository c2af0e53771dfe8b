"""This provider's own cassettes (tests/cassettes/openai/), replayed with request bodies matched."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import httpx
import yaml
from moneyed import Money

from neuron_provider_openai import OpenAIProvider
from neuron_tool import ToolRegistry
from neuron_turn.loop.provider import (
    ProviderMessage,
    ProviderRequest,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from tests.cassettes import CASSETTES, recorder, replay

from .._http_provider_support import get_weather, user
from ._support import KEY

HERE = CASSETTES / "openai"
SYSTEM = "You are a helpful assistant."


async def test_text_reply(api_key: str) -> None:
    req = ProviderRequest(
        model="gpt-4o-mini",
        system=SYSTEM,
        messages=[user("What is the capital of France?")],
        max_tokens=256,
    )
    with replay(HERE / "text_reply.yaml"):
        async with OpenAIProvider("gpt-4o-mini") as provider:
            response = await provider.complete(req)
    assert response.content == [TextPart("The capital of France is Paris.")]
    assert response.stop_reason == "end_turn"
    assert response.usage == TokenUsage(input_tokens=24, output_tokens=8, cache_read_tokens=0)
    assert response.model == "gpt-4o-mini-2024-07-18"
    # 24 * 0.15 + 8 * 0.60 per million tokens.
    assert response.cost == Money(Decimal("0.0000084"), "USD")


async def test_two_step_tool_loop(api_key: str) -> None:
    registry = ToolRegistry()
    registry.register(get_weather)
    tools = registry.schemas()
    question = user("What is the weather like in Paris right now?")
    with replay(HERE / "tool_loop.yaml"):
        async with OpenAIProvider("gpt-4o-mini") as provider:
            first = await provider.complete(
                ProviderRequest("gpt-4o-mini", [question], tools, max_tokens=1024, system=SYSTEM)
            )
            (call,) = first.content
            assert isinstance(call, ToolUsePart)
            result = await registry.call(call.name, call.input)
            history = [
                question,
                ProviderMessage("assistant", first.content),
                ProviderMessage("user", [ToolResultPart(call.id, str(result))]),
            ]
            second = await provider.complete(
                ProviderRequest("gpt-4o-mini", history, tools, max_tokens=1024, system=SYSTEM)
            )
    assert call == ToolUsePart("call_Xq3LpT8vN2mRcK7aYh5ZsW1d", "get_weather", {"city": "Paris"})
    assert (first.stop_reason, first.usage) == ("tool_use", TokenUsage(71, 15, 0))
    assert second.stop_reason == "end_turn"
    assert second.content == [
        TextPart("It's sunny in Paris right now, about 18 C with a light breeze from the west.")
    ]
    assert second.usage == TokenUsage(106, 20, 0)
    assert first.cost is not None and first.cost.amount > 0
    assert second.cost is not None and second.cost.amount > 0


def test_own_cassettes_say_they_were_written_by_hand_and_hold_no_key() -> None:
    for path in sorted(HERE.glob("*.yaml")):
        text = path.read_text()
        assert text.startswith("# Written by hand from the OpenAI"), path.name
        assert "authorization" not in text.lower(), path.name
        assert "sk-" not in text, path.name


async def test_recording_writes_no_key_into_the_cassette(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "message": {"content": "hi"}, "finish_reason": "stop"}],
        }
        return httpx.Response(
            200, json=body, headers={"openai-organization": "org-secret", "set-cookie": "a=b"}
        )

    path = tmp_path / "recorded.yaml"
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    with recorder(record_mode="all").use_cassette(str(path)):
        await OpenAIProvider("gpt-4o-mini", api_key=KEY, client=client).complete(
            ProviderRequest("gpt-4o-mini", [user("hi")])
        )
    await client.aclose()
    text = path.read_text()
    recorded = yaml.safe_load(text)["interactions"][0]
    assert json.loads(recorded["request"]["body"])["model"] == "gpt-4o-mini"
    assert KEY not in text
    assert "org-secret" not in text
    assert "authorization" not in {name.lower() for name in recorded["request"]["headers"]}
