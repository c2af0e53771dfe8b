"""Turns over scripted providers for the evals tests."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from layer0 import usd
from neuron_tool import tool
from neuron_turn import (
    NeuronTurn,
    ProviderRequest,
    ProviderResponse,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response


class City(BaseModel):
    name: str
    country: str


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def last_text(request: ProviderRequest) -> str:
    """The text of the last user message of `request`."""
    part = request.messages[-1].content[-1]
    return str(getattr(part, "text", ""))


def answering(fn: Callable[[str], str], *, cost: str = "0.001") -> NeuronTurn[str]:
    """A turn whose model answers `fn(message)` once, at `cost` dollars and 10/2 tokens."""

    def respond(request: ProviderRequest) -> ProviderResponse:
        return text_response(
            fn(last_text(request)),
            cost=usd(cost),
            usage=TokenUsage(input_tokens=10, output_tokens=2),
        )

    return NeuronTurn(FunctionProvider(respond))


def adding() -> NeuronTurn[str]:
    """A turn whose model calls `add(2, 3)` first, then answers the tool's result."""

    def respond(request: ProviderRequest) -> ProviderResponse:
        last = request.messages[-1].content[-1]
        if isinstance(last, ToolResultPart):
            return text_response(last.content, cost=usd("0.001"))
        return tool_call_response(ToolUsePart("c1", "add", {"a": 2, "b": 3}), cost=usd("0.002"))

    return NeuronTurn(FunctionProvider(respond), tools=[add])
