"""The scripted turns the tracing tests run."""

from __future__ import annotations

from layer0 import TurnInput, usd
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, TokenUsage, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


def two_tool_calls(divisor: int = 2) -> ScriptedProvider:
    """The model asks for `add` and `divide` in one answer, then answers."""
    return ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("call_1", "add", {"a": 17, "b": 23}),
                ToolUsePart("call_2", "divide", {"a": 8, "b": divisor}),
                usage=TokenUsage(120, 30, cache_read_tokens=100),
                cost=usd("0.0012"),
            ),
            text_response(
                "17 + 23 = 40 and 8 / 2 = 4.", usage=TokenUsage(180, 12), cost=usd("0.0008")
            ),
        ]
    )


def calculator(provider: ScriptedProvider, *, system: str = "") -> NeuronTurn:
    """The turn under test: agent `calculator`, model `test-model`, tools add and divide."""
    config = NeuronTurnConfig(model="test-model", agent="calculator", system=system, max_tokens=256)
    return NeuronTurn(provider, tools=ToolRegistry([add, divide]), config=config)


QUESTION = TurnInput(message="What are 17+23 and 8/0?", trigger="user", session="s-42")
