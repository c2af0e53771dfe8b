"""Strict tools over Ollama, which has no strict mode: refused when the turn is made."""

from __future__ import annotations

import httpx
import pytest

from neuron_tool import tool
from neuron_turn import NeuronTurn, UnsupportedStrictToolsError

from ._support import answering, chat_body, provider_with


@tool(strict=True)
def get_weather(city: str) -> str:
    """Return the weather in a city."""
    return f"Sunny in {city}"


@tool
def get_time(city: str) -> str:
    """Return the time in a city."""
    return f"Noon in {city}"


async def test_a_strict_tool_is_refused_when_the_turn_is_made_before_any_call() -> None:
    seen: list[httpx.Request] = []
    provider = provider_with(answering(chat_body(), seen))

    with pytest.raises(UnsupportedStrictToolsError, match=r"OllamaProvider .* get_weather ask"):
        NeuronTurn(provider, tools=[get_time, get_weather])

    assert seen == []
    NeuronTurn(provider, tools=[get_time])  # the same provider takes a tool that is not strict
    await provider.aclose()
