from __future__ import annotations

import asyncio

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import TurnInput
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_temporal import TemporalOrchestrator, TemporalWorker, run_worker
from neuron_turn.plugins import PluginManager, PluginSettings

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_run_worker_hosts_agents_until_cancelled(env: WorkflowEnvironment) -> None:
    address = env.client.service_client.config.target_host
    ready = asyncio.Event()
    worker = asyncio.create_task(
        run_worker(address, "run-worker", {"echo": EchoTurn()}, InMemoryStore(), ready=ready)
    )
    try:
        async with asyncio.timeout(30):
            await ready.wait()
        async with TemporalOrchestrator(address=address, task_queue="run-worker") as orchestrator:
            output = await orchestrator.dispatch("echo", TurnInput(message="hi", trigger="user"))
        assert output.message.as_text() == "hi"
    finally:
        worker.cancel()
        async with asyncio.timeout(30):
            await asyncio.gather(worker, return_exceptions=True)
    assert worker.cancelled()


async def test_the_plugin_worker_hosts_agents_until_cancelled(env: WorkflowEnvironment) -> None:
    address = env.client.service_client.config.target_host
    manager = PluginManager()
    manager.load_entry_points(PluginSettings(load=frozenset({"orch-temporal"})))
    queue = "plugin-worker"
    worker = manager.get_worker("temporal", address=address, task_queue=queue)
    assert isinstance(worker, TemporalWorker)
    running = asyncio.create_task(worker.run({"echo": EchoTurn()}, InMemoryStore()))
    try:
        async with asyncio.timeout(30):
            await worker.ready.wait()
        async with TemporalOrchestrator(address=address, task_queue=queue) as orchestrator:
            output = await orchestrator.dispatch("echo", TurnInput(message="hi", trigger="user"))
        assert output.message.as_text() == "hi"
    finally:
        running.cancel()
        async with asyncio.timeout(30):
            await asyncio.gather(running, return_exceptions=True)
    assert running.cancelled()
