"""Usage limits: the tool calls and tokens one turn may use, from its config or its input."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from layer0 import LogEffect, NonRetryableError, TurnConfig, TurnError, TurnInput, TurnOutput, usd
from layer0.testing import InMemoryStore
from neuron_tool import tool
from neuron_turn import (
    LimitCrossed,
    NeuronTurn,
    NeuronTurnConfig,
    RateLimitError,
    RunArgumentsError,
    TokenUsage,
    UsageLimits,
    limit_crossed,
)
from neuron_turn.loop._blocking import run_blocking
from neuron_turn.testing import ScriptedProvider

from .support import answer, appended, ask, build, call, calls


class Tally:
    """A tool that counts how often it ran."""

    def __init__(self) -> None:
        self.runs = 0

        @tool
        async def ping(n: int) -> str:
            """Ping once."""
            self.runs += 1
            return f"pong {n}"

        self.tools = [ping]


def pings(*ns: int, usage: TokenUsage | None = None) -> object:
    return calls(*(call(f"c{n}", "ping", n=n) for n in ns), usage=usage)


def limited(**limits: int) -> NeuronTurnConfig:
    return NeuronTurnConfig(model="test-model", usage_limits=UsageLimits(**limits))


def usage_log(output: TurnOutput) -> JsonValue:
    logs = [e for e in output.effects if isinstance(e, LogEffect) and e.data]
    found = [
        e.data["usage_limit"] for e in logs if isinstance(e.data, dict) and "usage_limit" in e.data
    ]
    assert len(found) == 1, output.effects
    return found[0]


def with_limits(limits: JsonValue, **rest: JsonValue) -> TurnInput:
    return ask(neuron_turn={"usage_limits": limits, **rest})


async def test_an_answer_asking_past_the_tool_call_limit_runs_none_of_its_calls() -> None:
    tally = Tally()
    turn, provider = build(
        [pings(1, 2, 3), answer("never")], tools=tally.tools, config=limited(tool_calls=2)
    )

    output = await turn.execute(ask(session="s1"))

    assert output.exit_reason == "budget_exhausted"
    assert tally.runs == 0 and len(provider.requests) == 1
    assert usage_log(output) == {"limit": "tool_calls", "allowed": 2, "used": 3}
    # Every call is answered, saying why, so the session's history stays whole.
    messages = appended(output).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]  # type: ignore[index,call-overload]
    results = str(messages[2])
    assert results.count("Not run: Stopped at the turn's limit of 2 tool calls") == 3


async def test_calls_within_the_limit_run_and_reaching_it_exactly_lets_the_model_answer() -> None:
    tally = Tally()
    turn, _ = build(
        [pings(1), pings(2), answer("done")], tools=tally.tools, config=limited(tool_calls=2)
    )

    output = await turn.execute(ask())

    assert output.exit_reason == "complete" and output.message.as_text() == "done"
    assert tally.runs == 2


async def test_the_tool_call_limit_counts_across_the_turns_model_calls() -> None:
    tally = Tally()
    script = [pings(1, 2), pings(3, 4), answer("never")]
    turn, provider = build(script, tools=tally.tools, config=limited(tool_calls=3))

    output = await turn.execute(ask())

    assert output.exit_reason == "budget_exhausted"
    assert tally.runs == 2 and len(provider.requests) == 2
    assert usage_log(output) == {"limit": "tool_calls", "allowed": 3, "used": 4}


async def test_a_hostile_answer_of_five_hundred_calls_runs_none_and_answers_each() -> None:
    tally = Tally()
    turn, provider = build(
        [pings(*range(500)), answer("never")], tools=tally.tools, config=limited(tool_calls=10)
    )

    output = await turn.execute(ask())

    assert output.exit_reason == "budget_exhausted" and tally.runs == 0
    assert len(provider.requests) == 1
    assert len(output.metadata.tools_called) == 500
    assert not any(record.success for record in output.metadata.tools_called)


@pytest.mark.parametrize(
    ("limits", "crossed"),
    [
        ({"input_tokens": 150}, {"limit": "input_tokens", "allowed": 150, "used": 200}),
        ({"output_tokens": 20}, {"limit": "output_tokens", "allowed": 20, "used": 20}),
        ({"total_tokens": 215}, {"limit": "total_tokens", "allowed": 215, "used": 220}),
    ],
)
async def test_a_token_limit_stops_the_turn_after_the_call_that_reaches_it(
    limits: dict[str, int], crossed: JsonValue
) -> None:
    tally = Tally()
    spent = TokenUsage(100, 10)
    script = [pings(1, usage=spent), pings(2, usage=spent), pings(3, usage=spent), answer("x")]
    turn, provider = build(script, tools=tally.tools, config=limited(**limits))

    output = await turn.execute(ask())

    assert output.exit_reason == "budget_exhausted"
    assert len(provider.requests) == 2 and tally.runs == 2
    assert usage_log(output) == crossed
    assert output.metadata.tokens_in == 200 and output.metadata.tokens_out == 20


async def test_a_turn_under_its_limits_declares_no_usage_log() -> None:
    turn, _ = build(
        [pings(1), answer("ok")],
        tools=Tally().tools,
        config=limited(tool_calls=5, total_tokens=10_000),
    )
    output = await turn.execute(ask())
    assert output.exit_reason == "complete"
    assert not [e for e in output.effects if isinstance(e, LogEffect)]


async def test_an_inputs_own_limits_win_over_the_configs_limit_by_limit() -> None:
    tally = Tally()
    config = limited(tool_calls=1, total_tokens=1_000_000)
    turn, _ = build([pings(1, 2), answer("done")], tools=tally.tools, config=config)

    output = await turn.execute(with_limits({"tool_calls": 2}))

    assert output.exit_reason == "complete" and tally.runs == 2
    # The config's token limit still holds for that input.
    over, _ = build(
        [pings(1, usage=TokenUsage(999_999, 1)), answer("x")], tools=Tally().tools, config=config
    )
    stopped = await over.execute(with_limits({"tool_calls": 2}))
    assert usage_log(stopped) == {"limit": "total_tokens", "allowed": 1_000_000, "used": 1_000_000}


async def test_an_inputs_limits_hold_for_a_turn_whose_config_sets_none() -> None:
    tally = Tally()
    turn, _ = build([pings(1, 2), answer("never")], tools=tally.tools)
    output = await turn.execute(with_limits({"tool_calls": 1}))
    assert output.exit_reason == "budget_exhausted" and tally.runs == 0


@pytest.mark.parametrize(
    ("limits", "named"),
    [
        ([1], "usage_limits must be an object"),
        ({"calls": 1}, "unknown keys ['calls']"),
        ({"tool_calls": -1}, "tool_calls must be a whole number 0 or more, not -1"),
        ({"total_tokens": 1.5}, "total_tokens must be a whole number 0 or more, not 1.5"),
        ({"input_tokens": True}, "input_tokens must be a whole number 0 or more, not True"),
        ({"output_tokens": "9"}, "output_tokens must be a whole number 0 or more, not '9'"),
    ],
)
async def test_limits_in_an_input_that_are_not_limits_are_refused_naming_what(
    limits: JsonValue, named: str
) -> None:
    turn, provider = build([answer("never")])
    with pytest.raises(NonRetryableError, match="usage") as raised:
        await turn.execute(with_limits(limits))
    assert named in str(raised.value) and provider.requests == []


def test_a_config_with_a_limit_that_is_not_a_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="tool_calls must be a whole number 0 or more, not -2"):
        UsageLimits(tool_calls=-2)


async def test_a_partial_leaves_its_continuation_what_the_usage_limits_have_left() -> None:
    store = InMemoryStore()
    tally = Tally()
    rate_limited = RateLimitError("429", provider="scripted", retry_after=1.0)
    script = [pings(1, 2, usage=TokenUsage(300, 20)), rate_limited, pings(3, 4), answer("x")]
    config = limited(tool_calls=3, total_tokens=1_000, input_tokens=5_000)
    turn, provider = build(script, tools=tally.tools, state=store, config=config)

    with pytest.raises(TurnError) as raised:
        await turn.execute(ask(session="s1"))

    partial = raised.value.partial
    assert partial is not None and tally.runs == 2
    options = partial.continuation.metadata["neuron_turn"]  # type: ignore[index,call-overload]
    left = {"tool_calls": 1, "input_tokens": 4_700, "total_tokens": 680}
    assert options["usage_limits"] == left  # type: ignore[index,call-overload]
    # Kept and continued, the turn stops where it would have stopped in one part.
    await store.append_history(appended(partial.output))
    output = await turn.execute(partial.continuation)
    assert output.exit_reason == "budget_exhausted" and tally.runs == 2
    assert usage_log(output) == {"limit": "tool_calls", "allowed": 1, "used": 2}
    assert len(provider.requests) == 3


def test_what_stopped_a_turn_reads_as_a_sentence() -> None:
    assert LimitCrossed("total_tokens", 50_000, 50_210).message() == (
        "Stopped at the turn's limit of 50,000 tokens in all (50,210 used)"
    )
    assert LimitCrossed("tool_calls", 20, 23).message() == (
        "Stopped at the turn's limit of 20 tool calls: the model asked for 23 in all, "
        "none of its last calls ran"
    )


def test_limits_say_whether_any_is_set_and_merge_over_defaults() -> None:
    assert not UsageLimits() and UsageLimits(output_tokens=0)
    merged = UsageLimits(tool_calls=4).over(UsageLimits(tool_calls=9, total_tokens=7))
    assert merged == UsageLimits(tool_calls=4, total_tokens=7)
    assert UsageLimits.from_json(merged.to_json()) == merged


async def test_limit_crossed_reads_back_which_limit_stopped_a_turn_and_none_otherwise() -> None:
    stopped, _ = build([pings(1, 2)], tools=Tally().tools, config=limited(tool_calls=1))
    assert limit_crossed(await stopped.execute(ask())) == LimitCrossed("tool_calls", 1, 2)
    # A cost budget ends a turn `budget_exhausted` too, naming no usage limit.
    spent, _ = build([pings(1)], tools=Tally().tools)
    output = await spent.execute(ask(config=TurnConfig(max_cost=usd("0"))))
    assert output.exit_reason == "budget_exhausted" and limit_crossed(output) is None


async def test_run_takes_usage_limits_for_that_run_as_pydantic_ais_does() -> None:
    tally = Tally()
    turn = NeuronTurn(ScriptedProvider([pings(1, 2), answer("done")]), tools=tally.tools)

    result = await turn.run("ping twice", usage_limits=UsageLimits(tool_calls=1))

    assert result.exit_reason == "budget_exhausted" and tally.runs == 0
    assert usage_log(result.turn_output)["limit"] == "tool_calls"  # type: ignore[index]


def test_run_sync_and_stream_take_usage_limits_too() -> None:
    tally = Tally()
    turn = NeuronTurn(ScriptedProvider([pings(1, 2), pings(3, 4)]), tools=tally.tools)

    synced = turn.run_sync("ping twice", usage_limits=UsageLimits(tool_calls=1))

    async def streamed() -> TurnOutput:
        events = turn.stream("ping twice", usage_limits=UsageLimits(tool_calls=1))
        _ = [event async for event in events]
        return events.output

    assert synced.exit_reason == "budget_exhausted"
    assert run_blocking(streamed()).exit_reason == "budget_exhausted" and tally.runs == 0


async def test_usage_limits_given_twice_are_refused_before_any_model_call() -> None:
    provider = ScriptedProvider([])
    turn = NeuronTurn(provider)

    with pytest.raises(RunArgumentsError, match="give them one way"):
        await turn.run(
            "hi",
            usage_limits=UsageLimits(tool_calls=1),
            metadata={"neuron_turn": {"usage_limits": {"tool_calls": 2}}},
        )
    assert provider.requests == []
