"""`capture_run_messages`: a run's messages kept when it fails (pydantic-ai's)."""

from __future__ import annotations

import pytest

from layer0 import ModelError, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import tool
from neuron_turn import (
    AwaitingApprovalError,
    NeuronTurn,
    ProviderMessage,
    RateLimitError,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    capture_run_messages,
)
from neuron_turn.testing import ScriptedProvider

from ..plugins.orch_local.test_retries import FakeClock
from .support import answer, call, calls


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: 21 C"


def _failing() -> NeuronTurn[str]:
    """A turn whose first answer calls `lookup` and whose second model call fails."""
    model = ScriptedProvider([calls(call("c1", "lookup", city="Oslo")), ModelError("cut off")])
    return NeuronTurn(model, tools=[lookup])


async def test_a_failed_run_leaves_what_was_said_before_it_failed() -> None:
    with capture_run_messages() as messages, pytest.raises(ModelError):
        await _failing().run("Weather in Oslo?")

    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert messages[1].content == (ToolUsePart("c1", "lookup", {"city": "Oslo"}),)
    [result] = messages[2].content
    assert isinstance(result, ToolResultPart) and result.content == "Oslo: 21 C"


async def test_a_failed_run_on_a_message_history_leaves_it_first() -> None:
    before = [
        ProviderMessage("user", (TextPart("Hi"),)),
        ProviderMessage("assistant", (TextPart("Hello"),)),
    ]
    with capture_run_messages() as messages, pytest.raises(ModelError):
        await _failing().run("Weather in Oslo?", message_history=before)

    assert messages[:2] == before and len(messages) == 5


async def test_a_stream_and_an_orchestrators_dispatch_leave_their_messages_too() -> None:
    with capture_run_messages() as streamed, pytest.raises(ModelError):
        _ = [event async for event in _failing().stream("Weather?")]
    assert len(streamed) == 3

    store = InMemoryStore()
    turn = NeuronTurn(ScriptedProvider([answer("Hi there.")]), state=store)
    with capture_run_messages() as dispatched:
        await LocalOrchestrator({"chat": turn}, store).dispatch(
            "chat", TurnInput(message="Hi", trigger="user", session="s")
        )
    assert [m.role for m in dispatched] == ["user", "assistant"]


async def test_the_first_run_in_the_block_is_kept_not_an_agent_tools_inner_one() -> None:
    inner = NeuronTurn(ScriptedProvider([answer("391")]))
    outer = NeuronTurn(
        ScriptedProvider([calls(call("a1", "ask", input="17*23?")), answer("It is 391.")]),
        tools=[inner.as_tool("ask", "Ask the calculator.")],
    )

    with capture_run_messages() as messages:
        await outer.run("17*23?")
        await NeuronTurn(ScriptedProvider([answer("later")])).run("another")

    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[-1].content == (TextPart("It is 391."),)


async def test_outside_a_block_nothing_is_kept_and_runs_are_as_before() -> None:
    with capture_run_messages() as messages:
        pass
    result = await NeuronTurn(ScriptedProvider([answer("hi")])).run("hello")

    assert messages == [] and result.output == "hi"


async def test_a_retried_dispatch_leaves_its_last_attempt() -> None:
    store = InMemoryStore()
    model = ScriptedProvider(
        [
            calls(call("c1", "lookup", city="Oslo")),
            RateLimitError("slow down", retry_after=0.0),
            answer("It is 21 C in Oslo."),
        ]
    )
    turn = NeuronTurn(model, tools=[lookup], state=store)
    orchestrator = LocalOrchestrator({"chat": turn}, store, clock=FakeClock())

    with capture_run_messages() as messages:
        done = await orchestrator.dispatch(
            "chat", TurnInput(message="Weather in Oslo?", trigger="user", session="s")
        )

    assert done.message.as_text() == "It is 21 C in Oslo."
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[-1].content == (TextPart("It is 21 C in Oslo."),)


async def test_a_run_refused_before_its_loop_still_leaves_the_history_it_was_given() -> None:
    before = [
        ProviderMessage("user", (TextPart("Delete it"),)),
        ProviderMessage("assistant", (ToolUsePart("w1", "lookup", {"city": "Oslo"}),)),
    ]
    turn = NeuronTurn(ScriptedProvider([]), tools=[lookup])

    with capture_run_messages() as messages, pytest.raises(AwaitingApprovalError):
        await turn.run("something else", message_history=before)

    assert messages == before
