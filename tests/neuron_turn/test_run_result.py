"""`NeuronTurn.run` and `run_sync`: a prompt in, the answer typed out (pydantic-ai's `run`)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from layer0 import ModelError, TurnConfig, usd
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_provider_openai import OpenAIProvider
from neuron_tool import RunContext, tool
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    NeuronTurn,
    NeuronTurnConfig,
    OutputMissingError,
    RunSyncError,
    TurnDone,
    UnansweredRunError,
)
from neuron_turn.loop._blocking import run_blocking
from neuron_turn.testing import ScriptedProvider

from ..loopback import json_server
from .support import answer, ask, call, calls


class Weather(BaseModel):
    city: str
    celsius: int


@tool
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"{city}: 21 C"


async def test_run_answers_a_prompt_with_its_text_its_usage_and_its_output() -> None:
    provider = ScriptedProvider(
        [calls(call("c1", "forecast", city="Oslo"), cost="0.01"), answer("21 C", cost="0.02")]
    )
    turn = NeuronTurn(provider, tools=[forecast])

    result = await turn.run("Weather in Oslo?", deps=None)

    assert result.output == "21 C" and result.exit_reason == "complete"
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens, usage.tool_calls) == (20, 10, 1)
    assert usage.cost.amount == Decimal("0.03")
    assert result.turn_output.message.as_text() == "21 C"
    assert provider.requests[0].messages[0].content[0].text == "Weather in Oslo?"  # type: ignore[union-attr]


async def test_run_of_a_typed_turn_gives_a_value_of_its_output_type() -> None:
    provider = ScriptedProvider([answer('{"city": "Oslo", "celsius": 21}')])
    turn = NeuronTurn(provider, output_type=Weather)

    result = await turn.run("Weather in Oslo?")

    assert result.output == Weather(city="Oslo", celsius=21)


async def test_a_run_that_hit_a_limit_has_no_output_and_says_why() -> None:
    provider = ScriptedProvider([calls(call("c1", "forecast", city="Oslo"))])
    turn = NeuronTurn(provider, tools=[forecast])

    result = await turn.run("Weather?", config=TurnConfig(max_turns=1))

    assert result.exit_reason == "max_turns"
    with pytest.raises(UnansweredRunError, match="exit reason: 'max_turns'") as missing:
        _ = result.output
    assert isinstance(missing.value, OutputMissingError)
    assert result.turn_output.metadata.turns_used == 1  # what it did is still there


async def test_a_run_paused_for_approval_lists_what_it_waits_on() -> None:
    provider = ScriptedProvider([calls(call("c1", "forecast", city="Oslo"))])
    config = NeuronTurnConfig(approval=ApprovalPolicy.of(["forecast"]))
    turn = NeuronTurn(provider, tools=[forecast], state=InMemoryStore(), config=config)

    result = await turn.run("Weather?", session="s1")

    assert result.exit_reason == AWAITING_APPROVAL
    assert [(p.id, p.name, p.input) for p in result.pending] == [
        ("c1", "forecast", {"city": "Oslo"})
    ]
    with pytest.raises(UnansweredRunError, match=r"result\.pending, decided with resume_input"):
        _ = result.output


async def test_run_on_a_session_reads_the_history_an_orchestrator_kept() -> None:
    provider = ScriptedProvider([answer("Hello Ann."), answer("You are Ann.")])
    store = InMemoryStore()
    turn = NeuronTurn(provider, state=store)
    # The turn declares the messages it adds; an orchestrator writes them.
    await LocalOrchestrator({"a": turn}, store).dispatch("a", ask("I am Ann.", session="s1"))

    second = await turn.run("Who am I?", session="s1")

    assert second.output == "You are Ann."
    texts = [m.content[0].text for m in provider.requests[1].messages]  # type: ignore[union-attr]
    assert texts == ["I am Ann.", "Hello Ann.", "Who am I?"]


def test_run_sync_runs_from_code_without_an_event_loop() -> None:
    turn = NeuronTurn(ScriptedProvider([answer("hi")]))

    assert turn.run_sync("hello").output == "hi"


async def test_run_sync_inside_a_running_loop_is_refused_naming_run() -> None:
    provider = ScriptedProvider([answer("never")])
    turn = NeuronTurn(provider)

    with pytest.raises(RunSyncError, match=r"await turn.run\(...\) instead"):
        turn.run_sync("hello")
    assert provider.requests == []


async def test_stream_takes_a_users_message_alone_as_run_does() -> None:
    turn = NeuronTurn(ScriptedProvider([answer("streamed")]))

    events = [event async for event in turn.stream("hello")]

    done = events[-1]
    assert isinstance(done, TurnDone) and done.output.message.as_text() == "streamed"


async def test_a_tool_running_a_turn_as_its_agent_charges_its_usage_to_the_callers_turn() -> None:
    helper = NeuronTurn(
        ScriptedProvider([calls(call("h1", "forecast", city="Oslo"), cost="0.5"), answer("21 C")]),
        tools=[forecast],
    )

    @tool
    async def ask_helper(ctx: RunContext[None], question: str) -> str:
        """Ask the weather agent."""
        return (await helper.run(question, charge_to=ctx)).output

    provider = ScriptedProvider(
        [calls(call("c1", "ask_helper", question="Oslo?")), answer("never")]
    )
    turn = NeuronTurn(provider, tools=[ask_helper])

    done = await turn.run("Weather?", config=TurnConfig(max_cost=usd("0.25")))

    assert done.exit_reason == "budget_exhausted"  # the helper's $0.50 counted against it
    assert (done.usage.input_tokens, done.usage.output_tokens) == (30, 15)
    assert done.usage.cost == usd("0.5")
    assert len(provider.requests) == 1


async def test_a_failed_run_charges_what_its_partial_turn_used() -> None:
    helper = NeuronTurn(
        ScriptedProvider([calls(call("h1", "forecast", city="Oslo"), cost="0.01")]),
        tools=[forecast],
        state=InMemoryStore(),
    )
    charged: list[tuple[Any, int, int]] = []
    context = RunContext(deps=None, charger=lambda cost, i, o: charged.append((cost, i, o)))

    with pytest.raises(ModelError) as failed:
        await helper.run("Weather?", session="h", charge_to=context)  # its model runs out

    assert failed.value.partial is not None
    assert charged == [(usd("0.01"), 10, 5)]


def test_run_sync_again_on_a_real_http_provider_reuses_its_pooled_connection() -> None:
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "served-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }
    with json_server(lambda seen: (200, answer), keep_alive=True) as server:
        provider = OpenAIProvider(base_url=f"{server.url}/v1", api_key="sk-loopback")
        turn = NeuronTurn(provider, config=NeuronTurnConfig(model="served-model"))

        # asyncio.run per call closed the loop the pooled connection belonged to:
        # the second call failed with "Event loop is closed".
        outputs = [turn.run_sync("hello").output for _ in range(3)]
        run_blocking(provider.aclose())  # on the loop its connection belongs to

    assert outputs == ["hi", "hi", "hi"] and len(server.requests) == 3


@tool
def noop() -> str:
    """Do nothing."""
    return "ok"


def _failing_after_a_tool() -> NeuronTurn[str]:
    """A sessionless turn whose first call ($0.30) runs a tool and whose second fails."""
    return NeuronTurn(
        ScriptedProvider([calls(call("c1", "noop"), cost="0.3"), ModelError("cut off")]),
        tools=[noop],
    )


async def test_a_charged_run_that_fails_without_a_session_is_charged_what_it_used() -> None:
    failing = _failing_after_a_tool()
    charged: list[tuple[Any, int, int]] = []
    ctx = RunContext(
        deps=None,
        charger=lambda cost, tokens_in, tokens_out: charged.append((cost, tokens_in, tokens_out)),
    )

    with pytest.raises(ModelError) as failed:
        await failing.run("go", charge_to=ctx)

    assert failed.value.partial is None  # no session: no partial turn kept
    assert charged == [(usd("0.3"), 10, 5)]


async def test_a_stream_that_failed_says_what_it_had_used() -> None:
    events = _failing_after_a_tool().stream("go")
    with pytest.raises(ModelError):
        _ = [event async for event in events]

    assert events.usage.cost == usd("0.3") and events.usage.tool_calls == 1
