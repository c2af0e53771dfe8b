"""A `retry_after` no provider bounded (a turn's own error's) still schedules a retry."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest
from temporalio import activity
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    DispatchFailed,
    PartialTurn,
    RetryableError,
    TurnInput,
    TurnMetadata,
    TurnOutput,
)
from layer0.testing import InMemoryStore
from neuron_turn.loop.provider_errors import MAX_RETRY_AFTER

from .conftest import FAST, hosting
from .test_retries import Attempts, FailingTurn

pytestmark = pytest.mark.asyncio(loop_scope="session")

DAY = timedelta(seconds=MAX_RETRY_AFTER)
ASK = TurnInput(message="x", trigger="user")


async def test_a_retry_after_past_a_day_from_a_turn_waits_a_day_and_retries(
    env: WorkflowEnvironment,
) -> None:
    attempts = Attempts(env)
    turn = FailingTurn([RetryableError("busy", retry_after=1e300)], attempts)
    async with hosting(env, {"flaky": turn}, InMemoryStore()) as orchestrator:
        output = await orchestrator.dispatch("flaky", ASK)
    assert output.message.as_text() == "ok"
    [gap] = attempts.gaps()
    assert DAY <= gap <= DAY + timedelta(seconds=10)


@pytest.mark.parametrize(
    ("after", "kept"), [(1e300, MAX_RETRY_AFTER), (math.inf, None), (math.nan, None), (-5.0, 0.0)]
)
async def test_a_turn_failing_for_good_with_an_odd_retry_after_fails_with_its_own_error(
    env: WorkflowEnvironment, after: float, kept: float | None
) -> None:
    attempts = Attempts(env)
    turn = FailingTurn([RetryableError("busy", retry_after=after)] * 10, attempts)
    async with hosting(env, {"flaky": turn}, InMemoryStore()) as orchestrator:
        with pytest.raises(DispatchFailed, match=r"RetryableError: busy$") as raised:
            await orchestrator.dispatch("flaky", ASK)
    cause = raised.value.__cause__
    assert isinstance(cause, RetryableError) and cause.retry_after == kept
    assert len(attempts.scheduled) == FAST.max_attempts


class PartThenOk:
    """Fails its first attempt after a part (say, its tools ran) with a huge `retry_after`."""

    continues_partial_turns = True

    def __init__(self) -> None:
        self.inputs: list[TurnInput] = []
        self.scheduled: list[datetime] = []

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.inputs.append(input)
        self.scheduled.append(activity.info().current_attempt_scheduled_time)
        if len(self.inputs) == 1:
            error = RetryableError("busy", retry_after=1e300)
            done = TurnOutput(message="part", exit_reason="error", metadata=TurnMetadata.zero())
            error.partial = PartialTurn(done, TurnInput(message="go on", trigger="user"))
            raise error
        return TurnOutput(message="ok", exit_reason="complete", metadata=TurnMetadata.zero())


async def test_a_huge_retry_after_of_a_partial_turn_continues_it_within_a_day(
    env: WorkflowEnvironment,
) -> None:
    turn = PartThenOk()
    async with hosting(env, {"parted": turn}, InMemoryStore()) as orchestrator:
        output = await orchestrator.dispatch("parted", ASK)
    assert output.message.as_text() == "ok"
    assert [i.message.as_text() for i in turn.inputs] == ["x", "go on"]
    first, then = turn.scheduled
    assert DAY <= then - first <= DAY + timedelta(seconds=10)
