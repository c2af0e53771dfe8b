"""The Responses provider's own cassettes (tests/cassettes/openai_responses/), bodies matched."""

from __future__ import annotations

from neuron_provider_openai import OpenAIResponsesProvider
from neuron_tool import ToolRegistry
from neuron_turn.loop.events import TextDelta
from neuron_turn.loop.provider import (
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    RawPart,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from tests.cassettes import CASSETTES, replay

from .._http_provider_support import get_weather, user

HERE = CASSETTES / "openai_responses"
SYSTEM = "You are a helpful assistant."


async def test_text_reply(api_key: str) -> None:
    req = ProviderRequest(
        "gpt-4o-mini", [user("What is the capital of France?")], system=SYSTEM, max_tokens=256
    )
    with replay(HERE / "text_reply.yaml"):
        async with OpenAIResponsesProvider("gpt-4o-mini") as provider:
            response = await provider.complete(req)
    assert response.content == [TextPart("The capital of France is Paris.")]
    assert (response.stop_reason, response.model) == ("end_turn", "gpt-4o-mini-2024-07-18")
    assert response.usage == TokenUsage(input_tokens=24, output_tokens=8, cache_read_tokens=0)
    assert response.cost is not None and response.cost.amount > 0


async def test_two_step_tool_loop_sends_the_reasoning_item_back(api_key: str) -> None:
    registry = ToolRegistry()
    registry.register(get_weather)
    tools = registry.schemas()
    question = user("What is the weather like in Paris right now?")
    with replay(HERE / "tool_loop.yaml"):
        async with OpenAIResponsesProvider("gpt-5-mini") as provider:
            first = await provider.complete(
                ProviderRequest("gpt-5-mini", [question], tools, max_tokens=1024, system=SYSTEM)
            )
            reasoning, call = first.content
            assert isinstance(call, ToolUsePart)
            result = await registry.call(call.name, call.input)
            history = [
                question,
                ProviderMessage("assistant", first.content),
                ProviderMessage("user", [ToolResultPart(call.id, str(result))]),
            ]
            second = await provider.complete(
                ProviderRequest("gpt-5-mini", history, tools, max_tokens=1024, system=SYSTEM)
            )
    assert isinstance(reasoning, RawPart) and reasoning.provider == "openai-responses"
    assert call == ToolUsePart("call_Rk4mT9pW2xZ7bN3qLs8vYd1H", "get_weather", {"city": "Paris"})
    assert (first.stop_reason, first.usage) == ("tool_use", TokenUsage(78, 87, 0))
    assert second.stop_reason == "end_turn"
    assert second.content[-1] == TextPart(
        "It's sunny in Paris right now, about 18 C with a light breeze from the west."
    )
    assert second.cost is not None and second.cost.amount > 0


async def test_streamed_reply(api_key: str) -> None:
    req = ProviderRequest("gpt-4o-mini", [user("Say hello in French.")], system=SYSTEM)
    with replay(HERE / "streamed_reply.yaml"):
        async with OpenAIResponsesProvider("gpt-4o-mini") as provider:
            events = [event async for event in provider.stream(req)]
    *deltas, answer = events
    assert deltas == [TextDelta("Bon"), TextDelta("jour"), TextDelta(" !")]
    assert isinstance(answer, ProviderResponse)
    assert answer.content == [TextPart("Bonjour !")]
    assert answer.usage == TokenUsage(21, 4, 0)


def test_own_cassettes_say_they_were_written_by_hand_and_hold_no_key() -> None:
    paths = sorted(HERE.glob("*.yaml"))
    assert [path.name for path in paths] == [
        "background_polled.yaml",
        "background_stream_resume_refused.yaml",
        "background_stream_resumed.yaml",
        "image_generation.yaml",
        "image_generation_streamed.yaml",
        "streamed_reply.yaml",
        "text_reply.yaml",
        "tool_loop.yaml",
    ]
    for path in paths:
        text = path.read_text()
        assert text.startswith("# Written by hand from the OpenAI Responses API"), path.name
        assert "authorization" not in text.lower(), path.name
        assert "sk-" not in text, path.name
