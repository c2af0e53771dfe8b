"""A custom effect handler's error is retried as a turn's is: a layer0 error but retryable, not."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import CustomEffect, DispatchFailed, NonRetryableError, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_local import EffectContext

from .conftest import FAST, hosting
from .test_dispatch import CountingTurn

pytestmark = pytest.mark.asyncio(loop_scope="session")

ASK = TurnInput(message="x", trigger="user")
NOTIFY = CustomEffect(effect_type="notify", data={"to": "nobody@invalid"})


async def test_a_handler_raising_a_non_retryable_error_runs_once(env: WorkflowEnvironment) -> None:
    calls: list[object] = []

    async def notify(effect: CustomEffect, context: EffectContext) -> None:
        calls.append(effect.data)
        raise NonRetryableError("no such address")

    agents = {"a": CountingTurn([NOTIFY])}
    async with hosting(env, agents, InMemoryStore(), custom_handlers={"notify": notify}) as orch:
        with pytest.raises(DispatchFailed, match="NonRetryableError: no such address"):
            await orch.dispatch("a", ASK)
    assert len(calls) == 1  # the same call fails again: asked once, as LocalOrchestrator does


async def test_a_handler_failing_outside_layer0_is_retried_as_a_worker_fault(
    env: WorkflowEnvironment,
) -> None:
    calls: list[object] = []

    async def notify(effect: CustomEffect, context: EffectContext) -> None:
        calls.append(effect.data)
        if len(calls) == 1:
            raise ConnectionResetError("the mail server hung up")

    agents = {"a": CountingTurn([NOTIFY])}
    async with hosting(env, agents, InMemoryStore(), custom_handlers={"notify": notify}) as orch:
        output = await orch.dispatch("a", ASK)
    assert output.message.as_text() == "done" and len(calls) == 2 < FAST.max_attempts + 1
