"""Dynamic instructions: the system prompt as a function of the input and the run context."""

from __future__ import annotations

from typing import Any

import pytest

from layer0 import ContextAssemblyError, TurnConfig
from neuron_tool import RunContext
from neuron_turn import InstructionsError, NeuronTurnConfig

from .support import answer, ask, build, call, calls


def greeting(context: RunContext[str]) -> str:
    assert context.input is not None
    said = len(context.input.message.as_text() or "")
    return f"The user is {context.deps}; session {context.session}; they said {said} characters."


async def test_a_sync_function_of_the_input_and_context_joins_the_system_prompt() -> None:
    config = NeuronTurnConfig(model="m", system="You are terse.", instructions=greeting)
    turn, provider = build([answer("hi")], config=config)
    addendum = TurnConfig(system_addendum="Answer in French.")
    await turn.execute(ask("hello", session="s-1", config=addendum), deps="Ann")
    assert provider.requests[0].system == (
        "You are terse.\nThe user is Ann; session s-1; they said 5 characters.\nAnswer in French."
    )


async def test_an_async_function_runs_once_per_run_not_per_model_call() -> None:
    calls_made: list[str | None] = []

    async def per_run(context: RunContext[Any]) -> str:
        calls_made.append(context.session)
        return f"Run number {len(calls_made)}."

    config = NeuronTurnConfig(model="m", instructions=per_run)
    script = [calls(call("c1", "add", a=1, b=2)), answer("3"), answer("again")]
    turn, provider = build(script, config=config)
    await turn.execute(ask(session="a"))
    await turn.execute(ask(session="b"))
    assert calls_made == ["a", "b"]
    assert [r.system for r in provider.requests] == ["Run number 1."] * 2 + ["Run number 2."]


async def test_empty_instructions_leave_the_system_prompt_as_configured() -> None:
    config = NeuronTurnConfig(model="m", instructions=lambda context: "")
    turn, provider = build([answer("hi"), answer("hi")], config=config)
    await turn.execute(ask())
    assert provider.requests[0].system is None
    config = NeuronTurnConfig(model="m", system="Base.", instructions=lambda context: "")
    turn, provider = build([answer("hi")], config=config)
    await turn.execute(ask())
    assert provider.requests[0].system == "Base."


def broken(context: RunContext[Any]) -> str:
    raise KeyError("tenant")


async def test_a_function_that_raises_fails_the_turn_naming_it_before_any_model_call() -> None:
    turn, provider = build([answer("never")], config=NeuronTurnConfig(instructions=broken))
    with pytest.raises(InstructionsError) as raised:
        await turn.execute(ask())
    assert str(raised.value) == "the instructions function 'broken' raised KeyError: 'tenant'"
    assert isinstance(raised.value, ContextAssemblyError)
    assert isinstance(raised.value.__cause__, KeyError)
    assert provider.requests == []


async def test_a_function_returning_something_else_than_text_is_refused() -> None:
    async def numbers(context: RunContext[Any]) -> Any:
        return 42

    turn, provider = build([answer("never")], config=NeuronTurnConfig(instructions=numbers))
    with pytest.raises(
        InstructionsError, match=r"numbers' returned a value of type int, not a str"
    ):
        await turn.execute(ask())
    assert provider.requests == []
