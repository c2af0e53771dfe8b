from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from itertools import pairwise

import pytest
from pydantic import JsonValue
from temporalio import activity
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    DispatchFailed,
    Halt,
    HookPoint,
    ModelError,
    NonRetryableError,
    ObserverHalt,
    RetryableError,
    Scope,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    WriteMemoryEffect,
)
from layer0.testing import InMemoryStore, RecordingHook
from neuron_hooks import HookRegistry
from neuron_orch_local import RetryPolicy
from neuron_orch_temporal import APPLIED_SCOPE, TurnPolicy
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
)
from neuron_turn.testing import FunctionProvider, text_response

from .conftest import FAST, hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


def task(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user")


class Attempts:
    """Notes each attempt of the activity it is called from, at the server's (skipped) time."""

    def __init__(self, env: WorkflowEnvironment) -> None:
        self.env = env
        self.scheduled: list[datetime] = []

    async def note(self) -> int:
        self.scheduled.append(await self.env.get_current_time())
        return activity.info().attempt

    def gaps(self) -> list[timedelta]:
        return [later - earlier for earlier, later in pairwise(self.scheduled)]


class FailingTurn:
    """Raises `errors` on the first attempts, then answers `ok`."""

    def __init__(self, errors: Iterable[Exception], attempts: Attempts) -> None:
        self.errors = list(errors)
        self.attempts = attempts

    async def execute(self, input: TurnInput) -> TurnOutput:
        attempt = await self.attempts.note()
        if attempt <= len(self.errors):
            raise self.errors[attempt - 1]
        return TurnOutput(message="ok", exit_reason="complete", metadata=TurnMetadata.zero())


async def test_a_rate_limit_is_retried_after_the_providers_retry_after(
    env: WorkflowEnvironment,
) -> None:
    attempts = Attempts(env)

    async def respond(request: ProviderRequest) -> ProviderResponse:
        if await attempts.note() == 1:
            raise RateLimitError("slow down", provider="fn", retry_after=90.0)
        return text_response("ok")

    turn = NeuronTurn(FunctionProvider(respond), config=NeuronTurnConfig(model="fn"))
    async with hosting(env, {"limited": turn}, InMemoryStore()) as orchestrator:
        output = await orchestrator.dispatch("limited", task("x"))
    assert output.message.as_text() == "ok"
    [gap] = attempts.gaps()
    # FAST's own interval is 1 s: only the provider's 90 s explains this wait.
    assert timedelta(seconds=90) <= gap < timedelta(seconds=100)


async def test_retryable_errors_back_off_between_attempts(env: WorkflowEnvironment) -> None:
    attempts = Attempts(env)
    turn = FailingTurn([RetryableError("busy"), RetryableError("busy")], attempts)
    async with hosting(env, {"flaky": turn}, InMemoryStore()) as orchestrator:
        output = await orchestrator.dispatch("flaky", task("x"))
    assert output.message.as_text() == "ok"
    first, second = attempts.gaps()
    assert timedelta(seconds=1) <= first < timedelta(seconds=2)
    assert timedelta(seconds=2) <= second < timedelta(seconds=3)


async def test_exhausted_retries_fail_with_the_turns_error_as_cause(
    env: WorkflowEnvironment,
) -> None:
    attempts = Attempts(env)
    turn = FailingTurn([RetryableError("busy", retry_after=2.5)] * 10, attempts)
    async with hosting(env, {"flaky": turn}, InMemoryStore()) as orchestrator:
        with pytest.raises(DispatchFailed) as caught:
            await orchestrator.dispatch("flaky", task("x"), workflow_id="exhausted-1")
    assert len(attempts.scheduled) == FAST.max_attempts
    assert str(caught.value) == (
        "agent 'flaky' failed in workflow exhausted-1 (route: flaky): RetryableError: busy"
    )
    cause = caught.value.__cause__
    assert isinstance(cause, RetryableError)
    assert cause.retry_after == 2.5


@pytest.mark.parametrize(
    "error", [NonRetryableError("bad key"), ModelError("output truncated (max_tokens)")]
)
async def test_non_retryable_and_model_errors_are_not_retried(
    env: WorkflowEnvironment, error: Exception
) -> None:
    attempts = Attempts(env)
    async with hosting(
        env, {"broken": FailingTurn([error] * 3, attempts)}, InMemoryStore()
    ) as orch:
        with pytest.raises(DispatchFailed) as caught:
            await orch.dispatch("broken", task("x"))
    assert len(attempts.scheduled) == 1
    assert type(caught.value.__cause__) is type(error)
    assert str(caught.value.__cause__) == str(error)


async def test_a_turn_halted_by_a_hook_returns_its_output_and_is_not_retried(
    env: WorkflowEnvironment,
) -> None:
    attempts = Attempts(env)

    async def respond(request: ProviderRequest) -> ProviderResponse:
        return text_response("never used")

    hooks = HookRegistry()
    hooks.add(RecordingHook([HookPoint.PRE_INFERENCE], action=Halt(reason="policy says no")))
    inner = NeuronTurn(FunctionProvider(respond), hooks=hooks, config=NeuronTurnConfig(model="fn"))

    class Counted:
        async def execute(self, input: TurnInput) -> TurnOutput:
            await attempts.note()
            return await inner.execute(input)

    async with hosting(env, {"halted": Counted()}, InMemoryStore()) as orchestrator:
        output = await orchestrator.dispatch("halted", task("x"))
    assert output.exit_reason == ObserverHalt(reason="policy says no")
    assert len(attempts.scheduled) == 1


class CrashAfterApply(InMemoryStore):
    """Applies the first write, then fails as a worker dying before it reports would."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[str, JsonValue]] = []
        self.crashed = False

    async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
        await super().write(scope, key, value)
        if scope != APPLIED_SCOPE:
            self.writes.append((key, value))
        elif not self.crashed:
            self.crashed = True
            raise ConnectionError("worker lost before reporting")


async def test_a_retried_memory_activity_applies_each_effect_once(
    env: WorkflowEnvironment,
) -> None:
    effects = [
        WriteMemoryEffect(scope="global", key="a", value=1),
        WriteMemoryEffect(scope="global", key="b", value=2),
    ]

    class Writer:
        async def execute(self, input: TurnInput) -> TurnOutput:
            return TurnOutput(
                message="ok", exit_reason="complete", metadata=TurnMetadata.zero(), effects=effects
            )

    store = CrashAfterApply()
    async with hosting(env, {"writer": Writer()}, store) as orchestrator:
        await orchestrator.dispatch("writer", task("x"), workflow_id="once-1")
    assert store.crashed
    assert store.writes == [("a", 1), ("b", 2)], "each effect applied exactly once"
    keys = await store.list(APPLIED_SCOPE, "once-1/")
    assert len(keys) == 2 and keys[0].endswith("/t0/e0") and keys[1].endswith("/t0/e1")


async def test_the_turn_policy_is_the_retry_policy_local_orchestrators_take() -> None:
    policy = TurnPolicy(max_attempts=4, max_total=30_000)
    assert isinstance(policy, RetryPolicy)
    assert RetryPolicy.model_validate(policy.model_dump()).max_total == 30_000


async def test_max_total_bounds_every_attempt_of_a_turn_together(
    env: WorkflowEnvironment,
) -> None:
    attempts = Attempts(env)
    turn = FailingTurn([RetryableError("busy", retry_after=10.0)] * 10, attempts)
    policy = FAST.model_copy(update={"max_attempts": 10, "max_total": 25_000})
    async with hosting(env, {"flaky": turn}, InMemoryStore(), policy=policy) as orchestrator:
        with pytest.raises(DispatchFailed):
            await orchestrator.dispatch("flaky", task("x"))
    # Tries at 0 s, 10 s and 20 s; a fourth at 30 s would pass the 25 s deadline.
    assert len(attempts.scheduled) == 3
