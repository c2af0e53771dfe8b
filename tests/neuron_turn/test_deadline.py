"""max_duration is a hard deadline; cancelling execute cancels cleanly."""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest

from layer0 import TurnConfig
from neuron_tool import tool
from neuron_turn import NeuronTurn, ProviderRequest, ProviderResponse
from neuron_turn.testing import FunctionProvider

from .support import TRUSTING, answer, appended, ask, build, call, calls


async def _forever() -> None:
    """Wait on an event nobody sets: hang until cancelled."""
    await asyncio.Event().wait()


async def _hang(request: ProviderRequest) -> ProviderResponse:
    await _forever()
    raise AssertionError("unreachable")


@tool
async def stall() -> str:
    """Never return."""
    await _forever()
    return "unreachable"


async def test_provider_that_never_returns_is_cancelled_at_the_deadline() -> None:
    turn = NeuronTurn(FunctionProvider(_hang))
    output = await turn.execute(ask(config=TurnConfig(max_duration=50)))
    assert output.exit_reason == "timeout"
    assert output.metadata.turns_used == 0
    assert output.metadata.duration >= 50


async def test_zero_max_duration_times_out_at_the_first_wait() -> None:
    turn = NeuronTurn(FunctionProvider(_hang))
    output = await turn.execute(ask(config=TurnConfig(max_duration=0)))
    assert output.exit_reason == "timeout"


async def test_tool_that_never_returns_is_cancelled_and_declared_effects_are_kept() -> None:
    script = [
        calls(call("c1", "write_memory", scope="global", key="k", value=1)),
        calls(call("c2", "stall")),
        answer("never"),
    ]
    turn, _ = build(script, tools=[stall], config=TRUSTING)
    output = await turn.execute(ask(session="s", config=TurnConfig(max_duration=50)))
    assert output.exit_reason == "timeout"
    assert [effect.type for effect in output.effects] == ["write_memory", "custom"]
    history = appended(output).messages
    last = history[-1]["content"][0]
    assert last["type"] == "tool_result" and last["tool_use_id"] == "c2"
    assert last["is_error"] is True and "Cancelled" in last["content"]


async def test_parallel_tools_hanging_are_all_cancelled_at_the_deadline() -> None:
    script = [calls(call("c1", "stall"), call("c2", "stall"))]
    turn, _ = build(script, tools=[stall])
    output = await turn.execute(ask(config=TurnConfig(max_duration=30)))
    assert output.exit_reason == "timeout"
    assert len(asyncio.all_tasks()) == 1


async def test_cancelling_the_caller_cancels_cleanly_leaving_no_task() -> None:
    running: list[str] = []
    both_running = asyncio.Event()

    @tool
    async def wait_forever(who: str) -> str:
        """Say it started, then never return."""
        running.append(who)
        if len(running) == 2:
            both_running.set()
        await _forever()
        return "unreachable"

    script = [calls(call("c1", "wait_forever", who="a"), call("c2", "wait_forever", who="b"))]
    turn, _ = build(script, tools=[wait_forever])
    task = asyncio.create_task(turn.execute(ask()))
    await both_running.wait()  # the turn is inside its concurrent tool calls
    task.cancel()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(asyncio.CancelledError):
            await task
        gc.collect()
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_a_tool_timeout_error_is_not_mistaken_for_the_deadline() -> None:
    @tool
    async def raises_timeout() -> str:
        """Raise TimeoutError of its own."""
        raise TimeoutError("backend slow")

    turn, _ = build([calls(call("c1", "raises_timeout")), answer("ok")], tools=[raises_timeout])
    output = await turn.execute(ask(config=TurnConfig(max_duration=60_000)))
    assert output.exit_reason == "complete"
    assert output.metadata.tools_called[0].success is False
