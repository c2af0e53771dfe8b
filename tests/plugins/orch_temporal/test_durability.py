"""Durability on the real dev server: a worker process killed mid-turn or mid-wait loses nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, LogEffect, SessionScope, TurnInput, TurnOutput, WriteMemoryEffect
from neuron_orch_local import DELEGATION_LOG
from neuron_orch_temporal import APPLIED_SCOPE, TemporalOrchestrator, TurnPolicy
from neuron_state_sqlite import SqliteStore
from neuron_turn import AWAITING_APPROVAL, Decision, NotAwaitingApprovalError

from ._worker_process import SLOW_WRITES

pytestmark = pytest.mark.asyncio(loop_scope="session")

SCRIPT = Path(__file__).with_name("_worker_process.py")
APPROVER = Path(__file__).with_name("_approval_worker.py")
CHECKPOINTER = Path(__file__).with_name("_checkpoint_worker.py")
WAIT = 60.0
"""The bound on every wait of this test, in seconds."""

# A killed worker's turn is retried after 2 s without heartbeats, not 30.
POLICY = TurnPolicy(heartbeat=2_000, initial_interval=200, max_attempts=5)


class WorkerProcess:
    """One `_worker_process.py`, read line by line; killed at the latest when the test ends."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def expect(self, wanted: str) -> None:
        assert self.process.stdout is not None
        async with asyncio.timeout(WAIT):
            while (line := await self.process.stdout.readline()) != b"":
                if line.decode().strip() == wanted:
                    return
        raise AssertionError(f"the worker exited before printing {wanted!r}")

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
        async with asyncio.timeout(WAIT):
            await self.process.wait()


def delegated_workflows(output: TurnOutput) -> list[str]:
    """The workflow ids in the delegation records of `output`."""
    records = [
        e.data[DELEGATION_LOG]
        for e in output.effects
        if isinstance(e, LogEffect) and isinstance(e.data, dict) and DELEGATION_LOG in e.data
    ]
    return [r["workflow_id"] for r in records if isinstance(r, dict)]  # type: ignore[misc]


@pytest.fixture
def workers() -> Iterator[list[WorkerProcess]]:
    started: list[WorkerProcess] = []
    yield started
    for worker in started:  # a failed test must not leave workers behind
        if worker.process.returncode is None:
            worker.process.kill()


async def start_worker(workers: list[WorkerProcess], *args: str) -> WorkerProcess:
    process = await asyncio.create_subprocess_exec(
        sys.executable, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    worker = WorkerProcess(process)
    workers.append(worker)
    await worker.expect("ready")
    return worker


@contextlib.asynccontextmanager
async def killing(workers: list[WorkerProcess]) -> AsyncIterator[None]:
    try:
        yield
    finally:
        for worker in workers:
            await worker.kill()


async def test_a_worker_killed_mid_turn_is_replaced_and_every_write_lands_once(
    dev_env: WorkflowEnvironment, tmp_path: Path, workers: list[WorkerProcess]
) -> None:
    address = dev_env.client.service_client.config.target_host
    db, audit, marker = tmp_path / "state.db", tmp_path / "audit.jsonl", tmp_path / "started"
    args = [str(SCRIPT), address, "durable", str(db), str(audit), str(marker)]

    orchestrator = TemporalOrchestrator(
        dev_env.client, task_queue="durable", policy=POLICY, pickup_timeout=WAIT
    )
    async with killing(workers):
        first = await start_worker(workers, *args)
        dispatch = asyncio.create_task(
            orchestrator.run(
                "planner", TurnInput(message="moon", trigger="user"), workflow_id="d-1"
            )
        )
        await first.expect("turn-started")
        await first.kill()
        assert first.process.returncode == -signal.SIGKILL
        await start_worker(workers, *args)
        async with asyncio.timeout(WAIT):
            result = await dispatch
            # The planner waited on its delegation: the record names the child's workflow.
            [child_id] = delegated_workflows(result.output)
            delegation = await orchestrator.result(child_id)

    assert result.output.message.as_text() == "planned: moon"
    assert delegation.output.message.as_text() == "slow done: work on moon"
    declared = [
        effect
        for output in (result.output, delegation.output)
        for effect in output.effects
        if isinstance(effect, WriteMemoryEffect)
    ]
    assert {e.key for e in declared} == {"plan", *SLOW_WRITES}
    applied = Counter(
        (line["type"], json.dumps(line["scope"]), line["key"])
        for line in map(json.loads, audit.read_text().splitlines())
        if line["scope"] != {"custom": APPLIED_SCOPE.name}
    )
    async with SqliteStore(db) as store:
        for effect in declared:
            assert await store.read(effect.scope, effect.key) == effect.value
            assert applied[("write_memory", '"global"', effect.key)] == 1, effect.key
        ledger = await store.list(APPLIED_SCOPE, "")
    assert sum(applied.values()) == len(declared)
    assert len(ledger) == len(declared)


async def test_a_worker_killed_while_a_turn_awaits_approval_is_replaced_and_it_resumes_once(
    dev_env: WorkflowEnvironment, tmp_path: Path, workers: list[WorkerProcess]
) -> None:
    address = dev_env.client.service_client.config.target_host
    task_queue = f"approve-{uuid.uuid4()}"
    db, tools, audit = tmp_path / "state.db", tmp_path / "tools.log", tmp_path / "audit.jsonl"
    args = [str(APPROVER), address, task_queue, str(db), str(tools), str(audit)]
    orchestrator = TemporalOrchestrator(
        dev_env.client, task_queue=task_queue, policy=POLICY, pickup_timeout=WAIT
    )
    tidy = TurnInput(message="Tidy up", trigger="user", session="s-kill")
    async with killing(workers):
        first = await start_worker(workers, *args)
        async with asyncio.timeout(WAIT):
            paused = await orchestrator.run("cleaner", tidy, workflow_id="approve-kill")
        await first.kill()
        assert first.process.returncode == -signal.SIGKILL
        await start_worker(workers, *args)
        # As another process would: find what waits on the session, then decide it.
        elsewhere = TemporalOrchestrator(dev_env.client, task_queue=task_queue, policy=POLICY)
        async with asyncio.timeout(WAIT):
            [listed] = await elsewhere.approvals(session="s-kill")
            decisions = [Decision.approve("c2")]
            done = await elsewhere.decide(listed.workflow_id, decisions, pause=listed.pause)
            with pytest.raises(NotAwaitingApprovalError, match="has finished"):
                await orchestrator.decide("approve-kill", decisions)

    assert paused.output.exit_reason == AWAITING_APPROVAL
    assert (listed.workflow_id, [c.id for c in listed.calls]) == ("approve-kill", ["c2"])
    assert done.output.message.as_text() == "contents of notes.txt; deleted old.log"
    assert tools.read_text().splitlines() == ["read notes.txt", "delete old.log"]
    appends = [
        line
        for line in map(json.loads, audit.read_text().splitlines())
        if line["type"] == "append_history"
    ]
    assert len(appends) == 2  # the paused turn's, then the resumed turn's: once each
    async with SqliteStore(db) as store:
        history = await store.read(SessionScope(id="s-kill"), HISTORY_KEY)
    assert isinstance(history, list)
    roles = [m["role"] for m in history if isinstance(m, dict)]
    assert roles == ["user", "assistant", "user", "user", "assistant"]


async def heartbeated(orchestrator: TemporalOrchestrator, workflow_id: str) -> None:
    """Return once the server holds a heartbeat with details (a checkpoint) of the workflow's turn.

    Only the server knows what it received; a worker knows only what it sent.
    """
    handle = (await orchestrator.client()).get_workflow_handle(workflow_id)
    async with asyncio.timeout(WAIT):
        while True:
            described = await handle.describe()
            pending = described.raw_description.pending_activities
            if pending and pending[0].heartbeat_details.payloads:
                return


async def test_a_worker_killed_after_a_checkpoint_is_replaced_and_its_tool_does_not_run_again(
    dev_env: WorkflowEnvironment, tmp_path: Path, workers: list[WorkerProcess]
) -> None:
    address = dev_env.client.service_client.config.target_host
    task_queue = f"checkpoint-{uuid.uuid4()}"
    db, tools, marker = tmp_path / "state.db", tmp_path / "tools.log", tmp_path / "stalled"
    args = [str(CHECKPOINTER), address, task_queue, str(db), str(tools), str(marker)]
    orchestrator = TemporalOrchestrator(
        dev_env.client, task_queue=task_queue, policy=POLICY, pickup_timeout=WAIT
    )
    read = TurnInput(message="read notes", trigger="user", session="s-checkpoint")
    async with killing(workers):
        first = await start_worker(workers, *args)
        dispatch = asyncio.create_task(
            orchestrator.dispatch("reader", read, workflow_id="checkpoint-kill")
        )
        await first.expect("stalled")
        await heartbeated(orchestrator, "checkpoint-kill")
        await first.kill()
        assert first.process.returncode == -signal.SIGKILL
        await start_worker(workers, *args)
        async with asyncio.timeout(WAIT):
            output = await dispatch

    # The second worker went on from the checkpoint the first one's heartbeat carried.
    assert tools.read_text().splitlines() == ["read notes.txt"]
    assert output.message.as_text() == "read it; 3 messages"
    async with SqliteStore(db) as store:
        history = await store.read(SessionScope(id="s-checkpoint"), HISTORY_KEY)
    assert isinstance(history, list)
    assert [m["role"] for m in history if isinstance(m, dict)] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
