"""Stop tools: a call that succeeds ends the turn with its result, no model call after it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from layer0 import CustomExit, HookContext, HookPoint, LogEffect, NonRetryableError, SkipTool
from layer0.testing import InMemoryStore
from neuron_hooks import FunctionHook, HookRegistry
from neuron_tool import ModelRetry, RunContext, ToolRegistry, tool
from neuron_turn import (
    ApprovalPolicy,
    Decision,
    NeuronTurn,
    NeuronTurnConfig,
    Tripwire,
    UnknownStopToolError,
    output_guardrail,
    output_validator,
    resume_input,
)
from neuron_turn.testing import ScriptedProvider

from .support import add, answer, appended, ask, build, call, calls


class Weather(BaseModel):
    city: str
    celsius: int


@tool
async def weather(city: str) -> Weather:
    """The weather in a city."""
    if city == "Atlantis":
        raise ValueError("no such city")
    return Weather(city=city, celsius=21)


@tool
async def forecast_text(city: str) -> str:
    """Tomorrow's weather in a city, in words."""
    return f"sunny in {city}"


def stopping(**config: Any) -> NeuronTurnConfig:
    return NeuronTurnConfig(model="m", stop_at_tools=["weather", "forecast_text"], **config)


TOOLS = [weather, forecast_text, add]


async def test_a_stop_tools_result_is_the_answer_and_no_model_call_follows() -> None:
    turn, provider = build(
        [calls(call("c1", "forecast_text", city="Paris")), answer("never")],
        tools=TOOLS,
        config=stopping(),
    )

    output = await turn.execute(ask(session="s1"))

    assert output.exit_reason == "complete"
    assert output.message.as_text() == "sunny in Paris"
    assert len(provider.requests) == 1 and provider.remaining == 1
    # The session holds the call and its result; the next turn's message follows them.
    messages = appended(output).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]  # type: ignore[index,call-overload]


async def test_a_stop_tool_that_fails_lets_the_model_read_the_error_and_go_on() -> None:
    turn, provider = build(
        [calls(call("c1", "weather", city="Atlantis")), answer("no such place")],
        tools=TOOLS,
        config=stopping(),
    )
    output = await turn.execute(ask())
    assert output.message.as_text() == "no such place" and len(provider.requests) == 2


async def test_a_stop_tool_a_hook_skips_ends_nothing() -> None:
    async def skip(context: HookContext) -> SkipTool:
        return SkipTool(reason="not today")

    hooks = HookRegistry()
    hooks.add(FunctionHook(skip, points=[HookPoint.PRE_TOOL_USE], name="skip"))
    turn, provider = build(
        [calls(call("c1", "forecast_text", city="Rome")), answer("skipped, then")],
        tools=TOOLS,
        hooks=hooks,
        config=stopping(),
    )
    output = await turn.execute(ask())
    assert output.message.as_text() == "skipped, then" and len(provider.requests) == 2


async def test_the_first_stop_tool_in_the_models_order_gives_the_answer_beside_other_calls() -> (
    None
):
    script = [
        calls(
            call("c1", "add", a=1, b=2),
            call("c2", "forecast_text", city="Oslo"),
            call("c3", "forecast_text", city="Rome"),
        )
    ]
    turn, _ = build(script, tools=TOOLS, config=stopping())
    output = await turn.execute(ask())
    assert output.message.as_text() == "sunny in Oslo"
    assert [r.name for r in output.metadata.tools_called] == [
        "add",
        "forecast_text",
        "forecast_text",
    ]


async def test_a_typed_turns_stop_tool_result_is_its_typed_answer() -> None:
    provider = ScriptedProvider([calls(call("c1", "weather", city="Paris"))])
    turn = NeuronTurn(provider, tools=ToolRegistry(TOOLS), config=stopping(), output_type=Weather)
    output = await turn.execute(ask())
    assert turn.output_value(output) == Weather(city="Paris", celsius=21)


async def test_a_typed_turns_stop_tool_answering_another_type_ends_output_invalid_saying_why() -> (
    None
):
    provider = ScriptedProvider([calls(call("c1", "forecast_text", city="Paris"))])
    turn = NeuronTurn(provider, tools=ToolRegistry(TOOLS), config=stopping(), output_type=Weather)
    output = await turn.execute(ask())
    assert output.exit_reason == CustomExit(name="output_invalid")
    (log,) = [e for e in output.effects if isinstance(e, LogEffect)]
    assert log.message.startswith("stop tool 'forecast_text' answered what is not Weather: ")


async def test_a_stop_tools_answer_passes_the_validators_which_may_send_it_back() -> None:
    @output_validator
    async def warm(ctx: RunContext[Any], text: str) -> str:
        if "Oslo" in text:
            raise ModelRetry("pick a warmer city")
        return text.upper()

    script = [
        calls(call("c1", "forecast_text", city="Oslo")),
        calls(call("c2", "forecast_text", city="Rome")),
    ]
    turn, provider = build(script, tools=TOOLS, config=stopping(output_validators=[warm]))

    output = await turn.execute(ask())

    assert output.message.as_text() == "SUNNY IN ROME"
    hint = provider.requests[1].messages[-1].content[-1]
    assert "pick a warmer city" in hint.text  # type: ignore[union-attr]


async def test_a_stop_tools_answer_passes_the_output_guardrails() -> None:
    @output_guardrail
    async def no_rain(ctx: RunContext[Any], text: str) -> Tripwire | None:
        return Tripwire("sunny forecasts are not allowed") if "sunny" in text else None

    turn, _ = build(
        [calls(call("c1", "forecast_text", city="Rome"))],
        tools=TOOLS,
        config=stopping(guardrails=[no_rain]),
    )
    output = await turn.execute(ask())
    assert output.exit_reason == CustomExit(name="guardrail_tripped")


async def test_a_stop_tool_a_person_approved_ends_the_resumed_turn() -> None:
    store = InMemoryStore()
    config = stopping(approval=ApprovalPolicy.of(["forecast_text"]))
    turn, provider = build(
        [calls(call("c1", "forecast_text", city="Rome")), answer("never")],
        tools=TOOLS,
        state=store,
        config=config,
    )
    paused = await turn.execute(ask(session="s1"))
    await store.append_history(appended(paused))

    output = await turn.execute(resume_input("s1", [Decision.approve("c1")]))

    assert output.exit_reason == "complete" and output.message.as_text() == "sunny in Rome"
    assert len(provider.requests) == 1


@pytest.mark.parametrize(
    ("stops", "error"),
    [
        (
            ["wether"],
            "NeuronTurnConfig.stop_at_tools names stop tools this turn does not have: wether; "
            "its tools: weather, forecast_text, add, and the effect and memory tools",
        ),
        ("weather", "stop_at_tools is a collection of tool names, not the string 'weather'"),
    ],
)
def test_stop_tools_the_turn_does_not_have_are_refused_when_it_is_made(
    stops: Any, error: str
) -> None:
    with pytest.raises(ValueError) as raised:  # UnknownStopToolError is one too
        NeuronTurn(
            ScriptedProvider([]),
            tools=ToolRegistry(TOOLS),
            config=NeuronTurnConfig(model="m", stop_at_tools=stops),
        )
    assert error in str(raised.value)


def test_an_effect_tool_may_be_a_stop_tool() -> None:
    turn = NeuronTurn(ScriptedProvider([]), config=NeuronTurnConfig(stop_at_tools=["delegate"]))
    assert turn.config.stop_at_tools == frozenset({"delegate"})


async def test_an_inputs_stop_tools_stop_its_turn_beside_the_configs() -> None:
    turn, provider = build(
        [calls(call("c1", "add", a=2, b=3)), answer("never")],
        tools=TOOLS,
        config=stopping(),
    )
    output = await turn.execute(ask(neuron_turn={"stop_at_tools": ["add"]}))
    assert output.message.as_text() == "5" and len(provider.requests) == 1


@pytest.mark.parametrize(
    ("stops", "error", "named"),
    [
        (["ad"], UnknownStopToolError, "TurnInput.metadata['neuron_turn']['stop_at_tools'] names"),
        ("add", NonRetryableError, "stop_at_tools must be a list of tool names, not 'add'"),
        ([1], NonRetryableError, "stop_at_tools must be a list of tool names, not [1]"),
    ],
)
async def test_an_inputs_stop_tools_that_are_not_its_tools_are_refused_before_any_call(
    stops: Any, error: type[Exception], named: str
) -> None:
    turn, provider = build([answer("never")], tools=TOOLS)
    with pytest.raises(error, match=re.escape(named)):
        await turn.execute(ask(neuron_turn={"stop_at_tools": stops}))
    assert provider.requests == []
