"""The Google provider against its cassettes (tests/cassettes/google/), request bodies matched."""

from __future__ import annotations

from neuron_provider_google import GoogleProvider
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

HERE = CASSETTES / "google"
SYSTEM = "You are a helpful assistant."


async def test_text_reply(api_key: str) -> None:
    req = ProviderRequest(
        "gemini-2.5-flash", [user("What is the capital of France?")], system=SYSTEM, max_tokens=256
    )
    with replay(HERE / "text_reply.yaml"):
        async with GoogleProvider("gemini-2.5-flash") as provider:
            response = await provider.complete(req)
    assert response.content == [TextPart("The capital of France is Paris.")]
    assert (response.stop_reason, response.model) == ("end_turn", "gemini-2.5-flash")
    assert response.usage == TokenUsage(input_tokens=14, output_tokens=47)
    assert response.cost is not None and response.cost.amount > 0


async def test_two_step_tool_loop_sends_the_thought_signature_back_on_its_call(
    api_key: str,
) -> None:
    registry = ToolRegistry()
    registry.register(get_weather)
    tools = registry.schemas()
    question = user("What is the weather like in Paris right now?")
    model = "gemini-3-flash-preview"
    with replay(HERE / "tool_loop.yaml"):
        async with GoogleProvider(model) as provider:
            first = await provider.complete(
                ProviderRequest(model, [question], tools, max_tokens=1024, system=SYSTEM)
            )
            signature, call = first.content
            assert isinstance(call, ToolUsePart)
            result = await registry.call(call.name, call.input)
            history = [
                question,
                ProviderMessage("assistant", first.content),
                ProviderMessage("user", [ToolResultPart(call.id, str(result))]),
            ]
            second = await provider.complete(
                ProviderRequest(model, history, tools, max_tokens=1024, system=SYSTEM)
            )
    assert isinstance(signature, RawPart) and signature.provider == "google"
    assert (call.name, call.input) == ("get_weather", {"city": "Paris"})
    assert call.id.startswith("call_0_")
    assert (first.stop_reason, first.usage) == ("tool_use", TokenUsage(62, 109))
    assert second.stop_reason == "end_turn"
    assert second.content[-1] == TextPart(
        "It's sunny in Paris right now, about 18 C with a light breeze from the west."
    )
    assert second.cost is not None and second.cost.amount > 0


async def test_streamed_reply(api_key: str) -> None:
    req = ProviderRequest("gemini-2.5-flash", [user("Say hello in French.")], system=SYSTEM)
    with replay(HERE / "streamed_reply.yaml"):
        async with GoogleProvider("gemini-2.5-flash") as provider:
            events = [event async for event in provider.stream(req)]
    *deltas, answer = events
    assert deltas == [TextDelta("Bon"), TextDelta("jour"), TextDelta(" !")]
    assert isinstance(answer, ProviderResponse)
    assert answer.content == [TextPart("Bonjour !")]
    assert answer.usage == TokenUsage(12, 25)


def test_own_cassettes_say_they_were_written_by_hand_and_hold_no_key() -> None:
    paths = sorted(HERE.glob("*.yaml"))
    assert [path.name for path in paths] == [
        "streamed_reply.yaml",
        "text_reply.yaml",
        "tool_loop.yaml",
    ]
    for path in paths:
        text = path.read_text()
        assert text.startswith("# Written by hand from the Gemini API reference"), path.name
        assert "x-goog-api-key" not in text.lower(), path.name
        assert "AIza" not in text and "key=" not in text, path.name


def test_the_recorder_filters_the_key_header() -> None:
    from tests.cassettes import recorder

    assert "x-goog-api-key" in recorder().filter_headers
