"""Builders shared by the loop tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from hypothesis import strategies as st
from moneyed import Money
from pydantic import JsonValue

from layer0 import (
    CustomEffect,
    EffectPolicy,
    HistoryAppend,
    StateReader,
    TurnConfig,
    TurnInput,
    TurnOutput,
    usd,
)
from neuron_hooks import HookRegistry
from neuron_tool import ToolDyn, ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, ProviderResponse, TokenUsage, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

TRUSTING = NeuronTurnConfig(model="test-model", effect_policy=EffectPolicy.everything())
"""A turn config granting every effect, for tests about effects themselves."""


def appended(output: TurnOutput) -> HistoryAppend:
    """The history append a turn with a session declares last."""
    effect = output.effects[-1]
    assert isinstance(effect, CustomEffect)
    return HistoryAppend.from_effect(effect)


def call(call_id: str, name: str, **arguments: JsonValue) -> ToolUsePart:
    """A tool call the model makes."""
    return ToolUsePart(call_id, name, dict(arguments))


def calls(
    *parts: ToolUsePart, cost: str = "0", usage: TokenUsage | None = None
) -> ProviderResponse:
    """A response asking for `parts`."""
    return tool_call_response(*parts, cost=usd(cost), usage=usage or TokenUsage(10, 5))


def answer(text: str, *, cost: str = "0", usage: TokenUsage | None = None) -> ProviderResponse:
    """A final answer."""
    return text_response(text, cost=usd(cost), usage=usage or TokenUsage(10, 5))


def ask(
    message: str = "hi",
    *,
    session: str | None = None,
    config: TurnConfig | None = None,
    **meta: Any,
) -> TurnInput:
    """A user's turn input."""
    return TurnInput(
        message=message, trigger="user", session=session, config=config, metadata=meta or None
    )


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def build(
    script: Iterable[ProviderResponse | BaseException],
    *,
    tools: Sequence[ToolDyn] = (add, echo),
    hooks: HookRegistry | None = None,
    state: StateReader | None = None,
    config: NeuronTurnConfig | None = None,
) -> tuple[NeuronTurn, ScriptedProvider]:
    """A NeuronTurn over a scripted provider."""
    provider = ScriptedProvider(script)
    turn = NeuronTurn(
        provider,
        tools=ToolRegistry(tools),
        hooks=hooks,
        state=state,
        config=config or NeuronTurnConfig(model="test-model"),
    )
    return turn, provider


def dollars(amount: str) -> Money:
    """USD Money."""
    return Money(amount, "USD")


def json_values(max_leaves: int = 10) -> st.SearchStrategy[JsonValue]:
    """Any JSON value, small: what a hostile model may send where JSON is asked for."""
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    return st.recursive(
        scalars | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=max_leaves,
    )
