"""A tool source asked at every step (`per_step`): each model call offers what it gives then."""

from __future__ import annotations

from pathlib import Path

import pytest

from layer0 import LogEffect, LogLevel, NonRetryableError
from neuron_state_sqlite import SqliteStore
from neuron_tool import (
    RunContext,
    ToolDyn,
    ToolSourceError,
    ToolStepSourceError,
    prefixed_tools,
    tool,
    tool_source,
)
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolResultPart, UnknownStopToolError
from neuron_turn.testing import ScriptedProvider

from .support import answer, ask, call, calls


class Session:
    """What a run's tools change: whether the user logged in."""

    def __init__(self) -> None:
        self.logged_in = False
        self.steps: list[int] = []


@tool
def login(ctx: RunContext[Session]) -> str:
    """Log in."""
    ctx.deps.logged_in = True
    return "logged in"


@tool
def balance() -> str:
    """The account's balance."""
    return "42 EUR"


@tool_source(per_step=True)
def account(ctx: RunContext[Session]) -> list[ToolDyn]:
    ctx.deps.steps.append(ctx.step)
    return [balance] if ctx.deps.logged_in else []


def _offered(provider: ScriptedProvider) -> list[list[str]]:
    return [[t.name for t in request.tools] for request in provider.requests]


def _results(provider: ScriptedProvider, request: int) -> list[ToolResultPart]:
    parts = provider.requests[request].messages[-1].content
    return [p for p in parts if isinstance(p, ToolResultPart)]


async def test_a_tool_a_call_turns_on_is_offered_from_the_next_model_call_of_the_same_run() -> None:
    provider = ScriptedProvider(
        [calls(call("c1", "login")), calls(call("c2", "balance")), answer("42 EUR")]
    )
    session = Session()
    turn = NeuronTurn(provider, tools=[login, account], config=NeuronTurnConfig(model="m"))

    done = await turn.execute(ask("my balance?"), deps=session)

    assert done.exit_reason == "complete"
    assert _offered(provider) == [["login"], ["login", "balance"], ["login", "balance"]]
    assert session.steps == [0, 1, 2]  # asked before each model call, with its step
    (ran,) = _results(provider, 2)
    assert ran.content == "42 EUR" and not ran.is_error


async def test_calls_run_against_the_tools_their_model_call_was_shown() -> None:
    shown = [True, False, False]

    @tool_source(per_step=True)
    def once(ctx: RunContext[None]) -> list[ToolDyn]:
        return [balance] if shown.pop(0) else []

    provider = ScriptedProvider(
        [calls(call("c1", "balance")), calls(call("c2", "balance")), answer("done")]
    )
    turn = NeuronTurn(provider, tools=[once])

    await turn.execute(ask())

    assert _offered(provider) == [["balance"], [], []]
    (first,) = _results(provider, 1)
    assert first.content == "42 EUR" and not first.is_error  # shown when asked for: run
    (second,) = _results(provider, 2)
    assert second.is_error and "balance" in second.content  # no longer shown: refused


async def test_a_per_run_source_beside_a_per_step_one_is_asked_once_and_its_tools_come_first() -> (
    None
):
    asked: list[str] = []

    @tool_source
    def fixed(ctx: RunContext[Session]) -> list[ToolDyn]:
        asked.append("fixed")
        return [login]

    provider = ScriptedProvider([calls(call("c1", "login")), answer("in")])
    turn = NeuronTurn(provider, tools=[account, fixed])

    await turn.execute(ask(), deps=Session())

    assert asked == ["fixed"]
    assert _offered(provider) == [["login"], ["login", "balance"]]


async def test_a_step_source_failing_mid_run_fails_the_turn_keeping_what_its_tools_did(
    tmp_path: Path,
) -> None:
    @tool_source(per_step=True)
    def flaky(ctx: RunContext[Session]) -> list[ToolDyn]:
        if ctx.step > 0:
            raise ConnectionError("the tenant service is gone")
        return [login]

    provider = ScriptedProvider([calls(call("c1", "login")), answer("never")])
    session = Session()
    async with SqliteStore(tmp_path / "s.db") as store:
        turn = NeuronTurn(provider, tools=[flaky], state=store)
        with pytest.raises(ToolStepSourceError, match="'flaky' raised ConnectionError") as failed:
            await turn.execute(ask(session="s"), deps=session)

    assert isinstance(failed.value, ToolSourceError) and isinstance(failed.value, NonRetryableError)
    assert len(provider.requests) == 1 and session.logged_in
    partial = failed.value.partial
    assert partial is not None  # what a retry continues from, the login not run again
    assert "logged in" in partial.output.model_dump_json()


async def test_a_step_source_giving_a_taken_name_mid_run_fails_naming_it() -> None:
    @tool_source(per_step=True)
    def shadow(ctx: RunContext[Session]) -> list[ToolDyn]:
        return [login] if ctx.step > 0 else []

    provider = ScriptedProvider([calls(call("c1", "login")), answer("never")])
    turn = NeuronTurn(provider, tools=[login, shadow])

    with pytest.raises(
        ToolStepSourceError, match=r"'shadow' gave a tool it cannot offer: tool 'login'"
    ):
        await turn.execute(ask(), deps=Session())


async def test_a_view_of_a_per_step_source_is_asked_at_each_step_too() -> None:
    provider = ScriptedProvider([calls(call("c1", "login")), answer("in")])
    turn = NeuronTurn(provider, tools=[login, prefixed_tools(account, "acct_")])

    await turn.execute(ask(), deps=Session())

    assert _offered(provider) == [["login"], ["login", "acct_balance"]]


def test_per_step_is_said_in_the_repr_and_must_be_a_bool() -> None:
    assert repr(account) == "FunctionToolSource('account', per_step=True)"
    with pytest.raises(TypeError, match="per_step must be True or False; got 1"):
        tool_source(per_step=1)(lambda ctx: [])  # type: ignore[arg-type]


async def test_a_stop_tool_a_later_step_offers_ends_the_turn_with_its_result() -> None:
    provider = ScriptedProvider([calls(call("c1", "login")), calls(call("c2", "balance"))])
    config = NeuronTurnConfig(model="m", stop_at_tools=("balance",))
    turn = NeuronTurn(provider, tools=[login, account], config=config)

    done = await turn.execute(ask("my balance?"), deps=Session())

    assert done.exit_reason == "complete"
    assert done.message.as_text() == "42 EUR"
    assert len(provider.requests) == 2  # no model call after the stop tool's result
    assert not [e for e in done.effects if isinstance(e, LogEffect)]


async def test_an_inputs_stop_tool_no_step_offers_is_warned_of_at_the_end_not_refused() -> None:
    provider = ScriptedProvider([answer("no login needed")])
    turn = NeuronTurn(provider, tools=[login, account], config=NeuronTurnConfig(model="m"))
    asked = ask("hi", neuron_turn={"stop_at_tools": ["balanse"]})

    done = await turn.execute(asked, deps=Session())

    assert done.exit_reason == "complete"
    (warning,) = [e for e in done.effects if isinstance(e, LogEffect)]
    assert warning.level == LogLevel.WARN
    assert warning.message.startswith("stop tools never offered in this run: balanse; ")
    assert warning.data == {"stop_at_tools": ["balanse"]}


def test_a_stop_tool_no_tool_has_is_still_refused_without_per_step_sources() -> None:
    with pytest.raises(
        UnknownStopToolError, match=r"names stop tools this turn does not have: balanse"
    ):
        NeuronTurn(
            ScriptedProvider([]),
            tools=[login, balance],
            config=NeuronTurnConfig(stop_at_tools=("balanse",)),
        )
