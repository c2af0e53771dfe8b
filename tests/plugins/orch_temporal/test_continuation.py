"""A turn that fails after its tools ran is continued by the workflow: its tools run once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    DispatchFailed,
    EffectPolicy,
    RetryableError,
    SessionScope,
    Turn,
    TurnInput,
    TurnOutput,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import FallbackTurn
from neuron_turn import (
    InvalidRequestError,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response

from ..orch_local._doubles import session_roles
from .agents import agent, lost_attempt_agent, rate_limited_agent, two_step
from .conftest import FAST, HUNG, hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

SESSION = SessionScope(id="s1")


def task(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user", session="s1")


async def test_a_429_after_a_tool_ran_is_continued_and_the_tool_runs_once(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", InMemoryStore()
    agent = rate_limited_agent(tool_log, state=store, retry_after=30.0)
    async with hosting(env, {"reader": agent}, store) as orchestrator:
        started = await env.get_current_time()
        result = await orchestrator.run("reader", task("read notes"), workflow_id="cont-1")
        waited = await env.get_current_time() - started

    # The model was called on the kept history: the user's message once, the call, its result.
    assert result.output.message.as_text() == "read it; 3 messages"
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\n"
    assert waited.total_seconds() >= 30  # the provider's retry-after, on the server's clock
    assert result.route == ("reader",)
    assert await session_roles(store) == ["user", "assistant", "user", "assistant"]


async def test_when_attempts_run_out_the_continued_turn_fails_keeping_its_first_part(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", InMemoryStore()
    agent = rate_limited_agent(tool_log, state=store, fail=FAST.max_attempts)
    async with hosting(env, {"reader": agent}, store) as orchestrator:
        with pytest.raises(DispatchFailed, match="429 rate limited") as raised:
            await orchestrator.dispatch("reader", task("read notes"), workflow_id="cont-2")
        roles = await session_roles(store)
        # The continuation's attempts ran no tool; the error hands on the first part, kept.
        cause = raised.value.__cause__
        assert isinstance(cause, RetryableError) and cause.partial is not None
        later = await orchestrator.dispatch("reader", cause.partial.continuation)

    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\n"
    assert roles == ["user", "assistant", "user"]
    assert later.message.as_text() == "read it; 3 messages"


class Wrapper:
    """A turn around another that does not say it reads continuations."""

    def __init__(self, inner: Turn) -> None:
        self.inner = inner

    async def execute(self, input: TurnInput) -> TurnOutput:
        return await self.inner.execute(input)


async def test_a_turn_that_reads_no_continuation_runs_its_input_again_after_its_part_is_kept(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", InMemoryStore()
    agent = Wrapper(rate_limited_agent(tool_log, state=store))
    async with hosting(env, {"reader": agent}, store) as orchestrator:
        output = await orchestrator.dispatch("reader", task("read notes"), workflow_id="cont-3")

    # Given its message again, the model found the file's contents in the session.
    assert output.message.as_text() == "read it; 4 messages"
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\n"
    assert await session_roles(store) == ["user", "assistant", "user", "user", "assistant"]


async def test_a_last_attempt_failing_after_its_tool_ran_keeps_what_it_did(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", InMemoryStore()
    agent = rate_limited_agent(tool_log, state=store)
    once = FAST.model_copy(update={"max_attempts": 1})
    async with hosting(env, {"reader": agent}, store, policy=once) as orchestrator:
        with pytest.raises(DispatchFailed, match="RetryableError: 429 rate limited") as raised:
            await orchestrator.dispatch("reader", task("read notes"), workflow_id="cont-4")
        # The tool ran, so the session says so: the next turn's model knows it read the file.
        assert await session_roles(store) == ["user", "assistant", "user"]
        cause = raised.value.__cause__
        assert isinstance(cause, RetryableError) and cause.partial is not None
        later = await orchestrator.dispatch("reader", cause.partial.continuation)

    assert later.message.as_text() == "read it; 3 messages"
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\n"


async def test_a_wait_past_max_total_ends_the_turn_with_what_it_did_kept(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", InMemoryStore()
    agent = rate_limited_agent(tool_log, state=store, retry_after=120.0)
    bounded = FAST.model_copy(update={"max_total": 60_000})
    async with hosting(env, {"reader": agent}, store, policy=bounded) as orchestrator:
        with pytest.raises(DispatchFailed, match="RetryableError: 429 rate limited") as raised:
            await orchestrator.dispatch("reader", task("read notes"), workflow_id="cont-5")

    cause = raised.value.__cause__
    assert isinstance(cause, RetryableError) and cause.retry_after == 120.0
    assert cause.partial is not None
    history = await store.read(SESSION, "messages")
    assert isinstance(history, list) and len(history) == 3


async def answers_with_the_tool_run_once(
    env: WorkflowEnvironment,
    first: Turn,
    second: Turn,
    store: InMemoryStore,
    tool_log: Path,
    workflow_id: str,
    *,
    asked_twice: bool = False,
) -> None:
    """Dispatch a chain of `first` then `second`: it answers from one run of its tool.

    The session holds the exchange once, with the user's message twice when
    `asked_twice` (the chain ran on its input again after its part was kept).
    """
    agent = FallbackTurn({"first:model": first, "second:model": second})
    async with hosting(env, {"reader": agent}, store) as orchestrator:
        output = await orchestrator.dispatch("reader", task("read notes"), workflow_id=workflow_id)

    roles = ["user", "assistant", "user", *(["user"] if asked_twice else []), "assistant"]
    assert output.message.as_text() == f"read it; {len(roles) - 1} messages"
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\n"
    assert await session_roles(store) == roles


async def test_a_fallback_chain_continues_its_model_rather_than_run_the_next_one_whole(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", InMemoryStore()
    first = rate_limited_agent(tool_log, state=store)
    second = rate_limited_agent(tool_log, state=store, fail=0)
    await answers_with_the_tool_run_once(env, first, second, store, tool_log, "cont-6")


async def test_a_model_failing_for_good_after_its_tool_ran_gives_way_to_the_next_from_there(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", InMemoryStore()
    too_long = InvalidRequestError("prompt is too long: 210000 tokens > 200000", provider="fn")
    small = rate_limited_agent(tool_log, state=store, fail=9, error=too_long)
    large = rate_limited_agent(tool_log, state=store, fail=0)
    # The part is kept, and its continuation falls back to the larger model: no tool again.
    await answers_with_the_tool_run_once(env, small, large, store, tool_log, "cont-7")


async def test_a_chain_with_a_model_of_another_kind_keeps_the_part_and_runs_its_input_again(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", InMemoryStore()
    first = rate_limited_agent(tool_log, state=store)
    other = Wrapper(rate_limited_agent(tool_log, state=store, fail=0))
    # The chain stops where the tool ran; run again on its input, it reads the kept result.
    await answers_with_the_tool_run_once(
        env, first, other, store, tool_log, "cont-8", asked_twice=True
    )


async def test_an_attempt_lost_after_its_tool_ran_is_taken_up_from_its_checkpoint(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store, stalled = tmp_path / "tools.log", InMemoryStore(), asyncio.Event()
    agent = lost_attempt_agent(tool_log, state=store, stalled=stalled)
    # Its first attempt hangs after the tool ran, until its start-to-close timeout gives it up.
    async with hosting(dev_env, {"reader": agent}, store, policy=HUNG) as orchestrator:
        output = await orchestrator.dispatch("reader", task("read notes"), workflow_id="lost-1")

    assert stalled.is_set()
    # The second attempt went on from the heartbeat's checkpoint: the tool ran once.
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\n"
    assert output.message.as_text() == "read it; 3 messages"
    assert await session_roles(store) == ["user", "assistant", "user", "assistant"]


async def test_an_attempt_lost_after_a_delegation_keeps_the_delegation_in_the_dispatch(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    store, stalled = InMemoryStore(), asyncio.Event()

    async def lead(request: ProviderRequest) -> ProviderResponse:
        results = [p for m in request.messages for p in m.content if isinstance(p, ToolResultPart)]
        if not results:
            asked = {"agent": "helper", "message": "add 2 and 3"}
            return tool_call_response(ToolUsePart("c1", "delegate", asked))
        if not stalled.is_set():
            stalled.set()
            await asyncio.Event().wait()  # until the attempt is given up
        return text_response(f"the helper said {results[0].content}")

    config = NeuronTurnConfig(model="fn", effect_policy=EffectPolicy.everything())
    agents: dict[str, Turn] = {
        "lead": NeuronTurn(FunctionProvider(lead), state=store, config=config),
        "helper": agent(two_step(lambda text: [], lambda text: "5")),
    }
    async with hosting(dev_env, agents, store, policy=HUNG) as orchestrator:
        result = await orchestrator.run("lead", task("ask the helper"), workflow_id="lost-2")

    assert stalled.is_set()
    assert result.output.message.as_text() == "the helper said 5"
    # The lost attempt had waited on the helper: the dispatch still lists that delegation.
    assert [(d.agent, d.output.message.as_text()) for d in result.delegations] == [("helper", "5")]
