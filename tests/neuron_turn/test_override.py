"""`NeuronTurn.override` and `block_model_requests`: testing code that holds its own agent."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import BaseModel

from layer0 import ModelError, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import FunctionTool, RunContext, tool
from neuron_turn import (
    ApprovalPolicy,
    CompactionBudget,
    Decision,
    InvalidEditedInputError,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    TextDelta,
    TextPart,
    UnknownStopToolError,
    resume_input,
)
from neuron_turn.testing import (
    FunctionProvider,
    ModelRequestsBlockedError,
    ScriptedProvider,
    block_model_requests,
    text_response,
)

from .support import answer, ask, call, calls


class Refund(BaseModel):
    amount: int


class CountingModel:
    """Stands for a real model's provider: it counts the requests that reach it."""

    def __init__(self, text: str = "from the real model") -> None:
        self.requests: list[ProviderRequest] = []
        self.text = text

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        self.requests.append(request)
        return text_response(self.text)


AGENT = NeuronTurn(CountingModel())
"""An agent made once at import, as application code makes it."""


async def answer_question(question: str) -> str:
    """Application code under test: it runs the module's agent."""
    return (await AGENT.run(question)).output


async def test_an_override_runs_the_agent_on_the_tests_model_and_ends_with_the_block() -> None:
    real = AGENT.provider
    assert isinstance(real, CountingModel)
    before = len(real.requests)

    with AGENT.override(provider=ScriptedProvider([answer("scripted")])):
        assert await answer_question("Hi?") == "scripted"
    assert len(real.requests) == before  # the real model was never asked

    assert await answer_question("Hi?") == "from the real model"
    assert len(real.requests) == before + 1


async def test_an_override_holds_for_execute_stream_and_an_orchestrators_dispatch() -> None:
    turn = NeuronTurn(CountingModel())
    store = InMemoryStore()
    orchestrator = LocalOrchestrator({"agent": turn}, store)
    test_model = ScriptedProvider([answer("one"), answer("two"), answer("three")])

    with turn.override(provider=test_model):
        executed = await turn.execute(TurnInput(message="a", trigger="user"))
        streamed = [e async for e in turn.stream("b") if isinstance(e, TextDelta)]
        dispatched = await orchestrator.dispatch(
            "agent", TurnInput(message="c", trigger="user", session="s")
        )

    assert executed.message.as_text() == "one"
    assert "".join(e.text for e in streamed) == "two"
    assert dispatched.message.as_text() == "three"
    assert turn.provider.requests == []  # type: ignore[attr-defined]


async def test_an_override_is_not_seen_by_a_task_running_beside_the_block() -> None:
    turn = NeuronTurn(CountingModel("real"))
    entered, finished = asyncio.Event(), asyncio.Event()

    async def overridden() -> str:
        with turn.override(provider=ScriptedProvider([answer("scripted")])):
            entered.set()
            await finished.wait()
            return (await turn.run("x")).output

    async def beside() -> str:
        await entered.wait()
        try:
            return (await turn.run("y")).output
        finally:
            finished.set()

    assert await asyncio.gather(overridden(), beside()) == ["scripted", "real"]


async def test_an_inner_override_wins_and_the_outer_one_comes_back_after_it() -> None:
    turn = NeuronTurn(CountingModel())

    with turn.override(provider=ScriptedProvider([answer("outer"), answer("outer again")])):
        assert (await turn.run("x")).output == "outer"
        with turn.override(provider=ScriptedProvider([answer("inner")])):
            assert (await turn.run("x")).output == "inner"
        assert (await turn.run("x")).output == "outer again"


def _deps_seen() -> tuple[list[Any], FunctionTool]:
    """A tool noting the deps of each run it is called in, and the list it notes them in."""
    seen: list[Any] = []

    @tool
    def whoami(ctx: RunContext[Any]) -> str:
        """Say who the caller is."""
        seen.append(ctx.deps)
        return "ok"

    return seen, whoami


def script() -> ScriptedProvider:
    """A model calling `whoami` once, then answering."""
    return ScriptedProvider([calls(call("c1", "whoami")), answer("done")])


async def test_an_override_replaces_deps_none_included_and_keeps_what_it_is_not_given() -> None:
    seen, whoami = _deps_seen()
    turn = NeuronTurn(script(), tools=[whoami], deps="production user")
    with turn.override(provider=script(), deps="test user"):
        await turn.run("who?")
    with turn.override(provider=script(), deps=None):
        await turn.run("who?")
    with turn.override(provider=script()):
        await turn.run("who?")

    assert seen == ["test user", None, "production user"]


async def test_an_override_of_tools_and_config_is_checked_as_a_new_turn_is() -> None:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: fake"

    turn = NeuronTurn(CountingModel())
    with turn.override(
        provider=ScriptedProvider([calls(call("c1", "lookup", city="Oslo")), answer("ok")]),
        tools=[lookup],
        config=NeuronTurnConfig(max_turns=5),
    ):
        result = await turn.run("Oslo?")
    assert result.usage.tool_calls == 1

    with (
        pytest.raises(UnknownStopToolError),
        turn.override(config=NeuronTurnConfig(stop_at_tools=["nope"])),
    ):
        pass


async def test_blocked_model_requests_fail_the_turn_before_anything_is_sent() -> None:
    real = CountingModel()
    turn = NeuronTurn(real)

    with block_model_requests(), pytest.raises(ModelRequestsBlockedError) as blocked:
        await turn.run("Hi?")

    assert real.requests == []
    assert "CountingModel" in str(blocked.value) and "turn.override" in str(blocked.value)
    assert not isinstance(blocked.value, ModelError)  # refused, not a model's failure
    assert (await turn.run("Hi?")).output == "from the real model"  # the block ended


async def test_test_providers_and_overrides_run_while_model_requests_are_blocked() -> None:
    turn = NeuronTurn(CountingModel())

    with block_model_requests():
        with turn.override(provider=ScriptedProvider([answer("scripted")])):
            assert (await turn.run("x")).output == "scripted"
        echo = NeuronTurn(FunctionProvider(lambda request: text_response("echo")))
        assert (await echo.run("x")).output == "echo"


class _CompactWithAnotherModel:
    """A context strategy whose summary asks a model of its own, accounted to the turn."""

    def __init__(self, model: CountingModel) -> None:
        self.model = model

    def token_estimate(self, messages: Sequence[ProviderMessage]) -> int:
        return 1_000 * len(messages)

    def should_compact(self, messages: Sequence[ProviderMessage], limit: int) -> bool:
        return True

    async def compact(
        self, messages: Sequence[ProviderMessage], budget: CompactionBudget
    ) -> list[ProviderMessage]:
        request = ProviderRequest(model="m", messages=[ProviderMessage("user", [TextPart("x")])])
        await budget.account(self.model).complete(request)
        return list(messages)


async def test_a_context_strategys_summary_call_is_blocked_too() -> None:
    summariser = CountingModel()
    turn = NeuronTurn(
        ScriptedProvider([answer("first"), answer("second")]),
        context=_CompactWithAnotherModel(summariser),
        config=NeuronTurnConfig(context_limit=1_000),
    )

    with block_model_requests(), pytest.raises(ModelRequestsBlockedError):
        await turn.run("x", message_history=[ProviderMessage("user", [TextPart("y" * 8_000)])])

    assert summariser.requests == []


def test_run_sync_sees_an_override_and_not_one_whose_block_has_ended() -> None:
    turn = NeuronTurn(CountingModel("real"))

    def on_a_thread() -> list[str]:
        said = [turn.run_sync("x").output]  # the thread's loop made outside any block
        with turn.override(provider=ScriptedProvider([answer("scripted")])):
            said.append(turn.run_sync("x").output)
        said.append(turn.run_sync("x").output)
        return said

    def first_inside_a_block() -> list[str]:
        with turn.override(provider=ScriptedProvider([answer("scripted")])):
            said = [turn.run_sync("x").output]  # the thread's loop made inside the block
        return [*said, turn.run_sync("x").output]

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(on_a_thread).result() == ["real", "scripted", "real"]
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(first_inside_a_block).result() == ["scripted", "real"]


async def test_an_overrides_deps_win_over_those_a_run_passes() -> None:
    seen, whoami = _deps_seen()
    turn = NeuronTurn(CountingModel(), tools=[whoami])
    with turn.override(provider=script(), deps="test db"):
        await turn.run("who?", deps="production db")  # the application's own deps

    assert seen == ["test db"]


async def test_a_turn_made_with_with_output_is_overridden_with_the_turn_it_came_from() -> None:
    agent = NeuronTurn(CountingModel())
    typed = agent.with_output(int).with_output(Refund)

    with agent.override(provider=ScriptedProvider([answer('{"amount": 5}')])):
        assert (await typed.run("how much?")).output == Refund(amount=5)

    assert agent.provider.requests == []  # type: ignore[attr-defined]


@tool
async def ban(user: str) -> str:
    """Ban a user by name."""
    return f"banned {user}"


@tool(name="ban")
async def ban_by_id(user: int) -> str:
    """Ban a user by number."""
    return f"banned #{user}"


async def test_check_resume_inside_an_override_checks_against_the_overrides_tools() -> None:
    store = InMemoryStore()
    config = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["ban"]))
    agent = NeuronTurn(CountingModel(), tools=[ban], state=store, config=config)
    scripted = ScriptedProvider([calls(call("c1", "ban", user=7))])
    edited = resume_input("s", [Decision.approve("c1", {"user": 5})])

    with agent.override(provider=scripted, tools=[ban_by_id]):
        await LocalOrchestrator({"a": agent}, store).dispatch("a", ask("ban 7", session="s"))
        await agent.check_resume(edited)  # a number, as the override's `ban` takes

    with pytest.raises(InvalidEditedInputError, match="schema"):
        await agent.check_resume(edited)  # the agent's own `ban` takes a name
