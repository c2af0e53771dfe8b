"""Our own hand-written cassettes, replayed with request bodies matched as parsed JSON."""

from __future__ import annotations

import operator
import os
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
import yaml
from moneyed import Money

from neuron_provider_anthropic import AnthropicProvider
from neuron_tool import ToolSchema, tool
from neuron_turn.loop.provider import (
    ProviderMessage,
    ProviderRequest,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from tests.cassettes import CASSETTES, replay

from ._support import ANSWERED, API_KEY, FakeApi, user

HERE = CASSETTES / "anthropic"
RECORDING = os.environ.get("NEURON_RECORD") == "1"
HAND_WRITTEN = (
    "# Written by hand from the Anthropic Messages API reference and ../shared/corpus recordings; "
    "re-record with NEURON_RECORD=1 and a real key."
)


def key() -> str:
    return os.environ["ANTHROPIC_API_KEY"] if RECORDING else API_KEY


OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul}


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    left, op, right = expression.split()
    return str(OPERATORS[op](int(left), int(right)))


CALCULATOR = ToolSchema(
    name=calculator.name, description=calculator.description, input_schema=calculator.input_schema
)
TOOL_LOOP_SYSTEM = "You are a helpful assistant. Use the calculator tool for arithmetic."
TOOL_LOOP_QUESTION = "What is 17 * 23? Use the calculator."


async def test_text_reply_cassette_replays_to_a_priced_text_response() -> None:
    req = ProviderRequest(
        model="claude-haiku-4-5",
        messages=[user("What is the capital of France?")],
        system="You are a concise assistant.",
    )

    with replay(HERE / "text_reply.yaml"):
        async with AnthropicProvider("claude-haiku-4-5", api_key=key()) as provider:
            response = await provider.complete(req)

    assert response.content == (TextPart("The capital of France is Paris."),)
    assert response.stop_reason == "end_turn"
    assert response.usage == TokenUsage(21, 10, cache_read_tokens=0, cache_creation_tokens=0)
    assert response.model == ANSWERED
    assert response.cost == Money(Decimal("0.000071"), "USD")


async def test_tool_loop_cassette_replays_a_tool_call_then_the_final_answer() -> None:
    history: list[ProviderMessage] = [user(TOOL_LOOP_QUESTION)]

    def ask() -> ProviderRequest:
        return ProviderRequest(
            model="claude-haiku-4-5",
            messages=list(history),
            tools=[CALCULATOR],
            system=TOOL_LOOP_SYSTEM,
        )

    with replay(HERE / "tool_loop.yaml"):
        async with AnthropicProvider("claude-haiku-4-5", api_key=key()) as provider:
            first = await provider.complete(ask())
            call = next(part for part in first.content if isinstance(part, ToolUsePart))
            result = await calculator.call(call.input)
            history += [
                ProviderMessage("assistant", first.content),
                ProviderMessage("user", [ToolResultPart(tool_use_id=call.id, content=str(result))]),
            ]
            final = await provider.complete(ask())

    assert first.stop_reason == "tool_use"
    assert call == ToolUsePart(
        id="toolu_01Hc7XJqz3NwRfP9aKd2LmTs", name="calculator", input={"expression": "17 * 23"}
    )
    assert result == "391"
    assert final.stop_reason == "end_turn"
    assert final.content == (TextPart("17 * 23 = 391."),)
    assert (first.model, final.model) == (ANSWERED, ANSWERED)
    assert first.cost == Money(Decimal("0.000752"), "USD")
    assert final.cost == Money(Decimal("0.000563"), "USD")


async def test_tool_loop_cassette_fails_when_a_request_is_left_unplayed() -> None:
    with pytest.raises(AssertionError, match="never requested"):
        with replay(HERE / "tool_loop.yaml"):
            async with AnthropicProvider("claude-haiku-4-5", api_key=key()) as provider:
                await provider.complete(
                    ProviderRequest(
                        model="claude-haiku-4-5",
                        messages=[user(TOOL_LOOP_QUESTION)],
                        tools=[CALCULATOR],
                        system=TOOL_LOOP_SYSTEM,
                    )
                )


@pytest.mark.parametrize("path", sorted(HERE.glob("*.yaml")), ids=lambda p: p.name)
def test_our_cassettes_say_they_were_written_by_hand_and_hold_no_key(path: Path) -> None:
    text = path.read_text()

    assert text.startswith(HAND_WRITTEN)
    assert "x-api-key" not in text.lower()
    assert "authorization" not in text.lower()
    assert API_KEY not in text


async def test_recording_writes_no_key_into_the_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_RECORD", "1")
    cassette = tmp_path / "recorded.yaml"
    api = FakeApi()  # stands in for the API: vcrpy records what the transport answers

    with replay(cassette):
        client = httpx.AsyncClient(transport=httpx.MockTransport(api))
        async with AnthropicProvider(
            "claude-haiku-4-5", api_key=API_KEY, client=client
        ) as provider:
            await provider.complete(
                ProviderRequest(model="claude-haiku-4-5", messages=[user("Hi")])
            )
        await client.aclose()

    text = cassette.read_text()
    recorded = yaml.safe_load(text)["interactions"][0]["request"]
    assert api.requests[0].headers["x-api-key"] == API_KEY  # it was sent...
    assert API_KEY not in text  # ...but not written
    assert "x-api-key" not in {name.lower() for name in recorded["headers"]}
