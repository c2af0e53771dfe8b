"""A strict tool is offered only over a provider with strict mode, and refused before any call."""

from __future__ import annotations

import pytest

from layer0 import NonRetryableError
from neuron_tool import RunContext, ToolRegistry, ToolSchema, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ToolResultPart,
    ToolUsePart,
    UnsupportedStrictToolsError,
)
from neuron_turn.cli._errors import EXIT_USAGE, classify
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .support import ask


@tool(strict=True)
async def lookup(city: str, days: int = 1) -> str:
    """Look the weather up."""
    return f"{city}: sun for {days} day(s)"


@tool
async def plain(text: str) -> str:
    """Echo."""
    return text


def _turn(provider: ScriptedProvider, *tools: object) -> NeuronTurn:
    return NeuronTurn(
        provider, tools=ToolRegistry(tools), config=NeuronTurnConfig(model="test-model")
    )


def test_a_strict_tool_over_a_provider_without_strict_mode_is_refused_when_the_turn_is_made() -> (
    None
):
    provider = ScriptedProvider([text_response("never")])

    with pytest.raises(UnsupportedStrictToolsError) as refused:
        _turn(provider, plain, lookup)

    assert str(refused.value) == (
        "the provider ScriptedProvider has no strict mode for tool inputs, and the tool(s) "
        "lookup ask for it (strict=True); make them strict=None (their input is still "
        "checked against the schema)"
    )
    assert isinstance(refused.value, NonRetryableError)
    assert provider.requests == []


async def test_a_provider_with_strict_mode_gets_the_strict_setting_on_each_tool() -> None:
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "lookup", {"city": "Oslo"})),
            text_response("sunny"),
        ],
        takes_strict_tools=True,
    )
    turn = _turn(provider, plain, lookup)

    output = await turn.execute(ask("weather?"))

    assert output.message.as_text() == "sunny"
    assert [[(t.name, t.strict) for t in r.tools] for r in provider.requests] == [
        [("plain", None), ("lookup", True)]
    ] * 2
    result = provider.requests[1].messages[-1].content[0]
    assert isinstance(result, ToolResultPart)
    assert result.content == "Oslo: sun for 1 day(s)"


async def test_a_prepare_that_makes_a_tool_strict_is_refused_before_the_model_call() -> None:
    def made_strict(ctx: RunContext[None], schema: ToolSchema) -> ToolSchema:
        return schema.model_copy(update={"strict": True})

    prepared = tool(name="prepared", prepare=made_strict)(plain.function)
    provider = ScriptedProvider([text_response("never")])
    turn = _turn(provider, prepared)

    with pytest.raises(UnsupportedStrictToolsError, match="the tool\\(s\\) prepared ask for it"):
        await turn.execute(ask("go"))

    assert provider.requests == []


async def test_strict_false_is_not_refused_anywhere() -> None:
    relaxed = tool(name="relaxed", strict=False)(plain.function)
    provider = ScriptedProvider([text_response("done")])

    output = await _turn(provider, relaxed).execute(ask("go"))

    assert output.message.as_text() == "done"
    assert provider.requests[0].tools[0].strict is False


def test_the_command_line_names_the_flag_and_the_fix_with_the_usage_exit_code() -> None:
    error = UnsupportedStrictToolsError("the provider X has no strict mode")

    code, line = classify(error, model=None)

    assert code == EXIT_USAGE
    assert line == (
        "--tool: the provider X has no strict mode, or choose a --model whose provider has it"
    )
