"""`NeuronTurn.as_tool`: an agent as another's tool (the Agents SDK's `agent.as_tool()`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from layer0 import TurnConfig, usd
from neuron_tool import RunContext, ToolRegistrationError, tool
from neuron_turn import (
    AGENT_EVENT_KEY,
    ApprovalPolicy,
    InvalidRequestError,
    NeuronTurn,
    NeuronTurnConfig,
    TextDelta,
    ToolProgress,
    ToolResult,
    ToolResultPart,
    ToolStart,
    nested_event,
)
from neuron_turn.testing import ScriptedProvider

from .support import answer, call, calls


class Product(BaseModel):
    value: int


def _caller(*script: Any, tools: list[Any]) -> NeuronTurn[Any]:
    return NeuronTurn(ScriptedProvider(list(script)), tools=tools)


def _result(turn: NeuronTurn[Any], request: int = 1) -> ToolResultPart:
    (result,) = turn.provider.requests[request].messages[-1].content  # type: ignore[attr-defined]
    assert isinstance(result, ToolResultPart)
    return result


async def test_an_agent_tool_answers_with_the_agents_typed_answer_and_charges_the_caller() -> None:
    inner = ScriptedProvider([answer('{"value": 391}', cost="0.25")])
    calculator = NeuronTurn(inner, output_type=Product)
    researcher = _caller(
        calls(call("r1", "ask_calculator", input="What is 17*23?"), cost="0.1"),
        answer("391", cost="0.1"),
        tools=[calculator.as_tool("ask_calculator", "Ask the calculator agent.")],
    )

    result = await researcher.run("17*23?")

    assert result.output == "391"
    assert _result(researcher).content == '{"value":391}'
    assert inner.requests[0].messages[0].content[0].text == "What is 17*23?"  # type: ignore[union-attr]
    assert result.usage.cost == usd("0.45")  # the calculator's 0.25 counted


async def test_an_agent_tool_that_stops_unanswered_fails_the_call_naming_why() -> None:
    loops = ScriptedProvider([calls(call("c1", "noop")), calls(call("c2", "noop"))])

    @tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    looping = NeuronTurn(loops, tools=[noop], config=NeuronTurnConfig(max_turns=1))
    caller = _caller(
        calls(call("r1", "ask_looping", input="go")),
        answer("gave up"),
        tools=[looping.as_tool("ask_looping", "Ask an agent that never ends.")],
    )

    await caller.run("go")

    failed = _result(caller)
    assert failed.is_error
    assert failed.content == (
        "tool 'ask_looping' failed: the agent did not answer: it stopped without an answer "
        "(max_turns)"
    )


async def test_an_agent_tool_whose_call_waits_for_approval_says_a_tool_cannot_give_it() -> None:
    @tool
    def pay(amount: int) -> str:
        """Pay an amount."""
        return "paid"

    payer = NeuronTurn(
        ScriptedProvider([calls(call("p1", "pay", amount=5))]),
        tools=[pay],
        config=NeuronTurnConfig(approval=ApprovalPolicy.of(["pay"])),
    )
    caller = _caller(
        calls(call("r1", "ask_payer", input="pay 5")),
        answer("could not"),
        tools=[payer.as_tool("ask_payer", "Ask the payer.")],
    )

    await caller.run("pay")

    assert _result(caller).content.endswith(
        "one of its calls waits for a person's approval, which a tool cannot give"
    )


@dataclass
class Shop:
    name: str


async def test_pass_deps_gives_the_agent_the_calling_runs_deps_else_its_own() -> None:
    seen: list[str] = []

    @tool
    def shop_name(ctx: RunContext[Shop]) -> str:
        """The shop's name."""
        seen.append(ctx.deps.name)
        return ctx.deps.name

    def helper() -> NeuronTurn[Any]:
        script = [calls(call("s1", "shop_name")), answer("named")]
        return NeuronTurn(ScriptedProvider(script), tools=[shop_name], deps=Shop("own"))

    for pass_deps in (True, False):
        agent_tool = helper().as_tool("ask_shop", "Ask the shop agent.", pass_deps=pass_deps)
        caller = _caller(
            calls(call("r1", "ask_shop", input="name?")), answer("done"), tools=[agent_tool]
        )
        await caller.run("name?", deps=Shop("caller's"))

    assert seen == ["caller's", "own"]


async def test_the_callers_budget_covers_what_its_agent_tool_spends() -> None:
    spender = NeuronTurn(ScriptedProvider([answer("spent", cost="0.6")]))
    caller = _caller(
        calls(call("r1", "ask_spender", input="spend")),
        answer("never"),
        tools=[spender.as_tool("ask_spender", "Ask the spender.")],
    )

    result = await caller.run("go", config=TurnConfig(max_cost=usd("0.5")))

    assert result.exit_reason == "budget_exhausted"


@pytest.mark.parametrize(
    ("name", "description", "match"),
    [("ask me", "Ask.", r"cannot register tool 'ask me'"), ("ask", " ", r"needs a description")],
)
def test_an_agent_tool_with_a_bad_name_or_no_description_is_refused(
    name: str, description: str, match: str
) -> None:
    with pytest.raises(ToolRegistrationError, match=match):
        NeuronTurn(ScriptedProvider([])).as_tool(name, description)


def _nested(events: list[Any]) -> list[Any]:
    """The agent tool's own events among a caller's stream's `ToolProgress` reports."""
    return [nested_event(e) for e in events if isinstance(e, ToolProgress)]


async def test_an_agent_tool_streaming_its_events_shows_them_in_the_callers_stream() -> None:
    inner = ScriptedProvider(
        [calls(call("c1", "lookup", city="Oslo"), cost="0.2"), answer("21 C", cost="0.05")]
    )

    @tool
    def lookup(city: str) -> str:
        """Look a city's weather up."""
        return f"{city}: 21 C"

    weather = NeuronTurn(inner, tools=[lookup])
    caller = _caller(
        calls(call("r1", "ask_weather", input="Oslo?"), cost="0.1"),
        answer("It is 21 C.", cost="0.1"),
        tools=[weather.as_tool("ask_weather", "Ask the weather agent.", stream_events=True)],
    )

    events = caller.stream("Weather in Oslo?")
    seen = [event async for event in events]

    nested = _nested(seen)
    kinds = [event.kind for event in nested]
    assert "turn_done" not in kinds  # the call's own result says how it ended
    [started] = [e for e in nested if isinstance(e, ToolStart)]
    [ran] = [e for e in nested if isinstance(e, ToolResult)]
    assert (started.name, ran.content) == ("lookup", "Oslo: 21 C")
    assert "".join(e.text for e in nested if isinstance(e, TextDelta)) == "21 C"
    progress = [e for e in seen if isinstance(e, ToolProgress)]
    assert {(p.id, p.name) for p in progress} == {("r1", "ask_weather")}
    outer_result = next(e for e in seen if isinstance(e, ToolResult) and e.id == "r1")
    assert outer_result.content == "21 C"
    assert seen.index(progress[-1]) < seen.index(outer_result)  # told while the call ran
    assert events.output.metadata.cost == usd("0.45")  # the agent's 0.25 charged


async def test_an_agent_tool_streams_nothing_unless_asked_or_when_nobody_listens() -> None:
    def agent() -> NeuronTurn[Any]:
        return NeuronTurn(ScriptedProvider([answer("21 C", cost="0.05")]))

    quiet = _caller(
        calls(call("r1", "ask_weather", input="Oslo?")),
        answer("21 C."),
        tools=[agent().as_tool("ask_weather", "Ask the weather agent.")],
    )
    assert _nested([event async for event in quiet.stream("Weather?")]) == []

    unheard = _caller(
        calls(call("r1", "ask_weather", input="Oslo?")),
        answer("21 C."),
        tools=[agent().as_tool("ask_weather", "Ask the weather agent.", stream_events=True)],
    )
    result = await unheard.run("Weather?")  # no stream, no observer: a plain run inside
    assert result.output == "21 C." and result.usage.cost == usd("0.05")
    assert _result(unheard).content == "21 C"


async def test_a_streaming_agent_tool_that_fails_is_charged_what_its_partial_turn_used() -> None:
    inner = ScriptedProvider(
        [calls(call("c1", "noop"), cost="0.3"), InvalidRequestError("the model refused it")]
    )

    @tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    breaking = NeuronTurn(inner, tools=[noop])
    caller = _caller(
        calls(call("r1", "ask_it", input="go")),
        answer("gave up"),
        tools=[breaking.as_tool("ask_it", "Ask.", stream_events=True)],
    )

    events = caller.stream("go")
    seen = [event async for event in events]

    assert _result(caller).is_error
    assert [e.name for e in _nested(seen) if isinstance(e, ToolResult)] == ["noop"]
    assert events.output.metadata.cost == usd("0.3")  # the failed agent's first call


def test_nested_event_reads_only_reports_that_carry_an_event() -> None:
    assert nested_event(ToolProgress("c1", "t", "working")) is None
    assert nested_event(ToolProgress("c1", "t", "x", data={"other": 1})) is None
    with pytest.raises(ValueError, match="holds str, not an event"):
        nested_event(ToolProgress("c1", "t", "x", data={AGENT_EVENT_KEY: "text"}))
    with pytest.raises(ValueError, match="not a turn event"):
        nested_event(ToolProgress("c1", "t", "x", data={AGENT_EVENT_KEY: {"type": "nope"}}))


@pytest.mark.parametrize(
    ("event", "words"),
    [
        (
            {
                "type": "model_call_done",
                "call": 1,
                "model": "m",
                "stop_reason": "end_turn",
                "usage": 5,
            },
            "without a valid usage",
        ),
        ({"type": "model_call_start", "call": float("inf")}, "a number out of range"),
    ],
)
def test_a_report_carrying_a_malformed_event_is_a_value_error(event: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        nested_event(ToolProgress("c1", "t", "x", data={AGENT_EVENT_KEY: event}))
