"""`neuron-turn run --orchestrator temporal` pausing for approval, and `resume` deciding it.

A real `neuron-turn worker` (whose turn holds `fixture_add` for approval) and
real `run`/`resume` processes meet on the dev server: the paused workflow
waits, and `resume` hands the decisions to that workflow (`decide`), which
resumes the turn once.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Final

import pytest
from temporalio.testing import WorkflowEnvironment

from neuron_orch_temporal import TemporalOrchestrator
from neuron_turn.cli._errors import EXIT_AWAITING_APPROVAL, EXIT_DECISIONS, EXIT_ORCHESTRATOR

from .test_cli import neuron_turn, on_dev_server, worker

pytestmark = pytest.mark.asyncio(loop_scope="session")


APPROVING_TURN: Final = (
    *("--model", "fixture:tool", "--tool", "fixture_add"),
    *("--approve-tool", "fixture_add"),
)
"""The worker's turn: the `tool` model, its `fixture_add` calls held for approval."""


async def test_resume_decides_the_waiting_workflow_once(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address, task_queue, state, remote = on_dev_server(dev_env, tmp_path, "approve")
    orchestrator = TemporalOrchestrator(dev_env.client, task_queue=task_queue)
    async with worker(address, task_queue, state, *APPROVING_TURN) as hosting:
        code, out, err = await neuron_turn("run", "add", "--session", "s1", *remote)
        assert code == EXIT_AWAITING_APPROVAL, err
        assert '  call_1  fixture_add  {"a": 2, "b": 3}' in err
        (waiting,) = await orchestrator.approvals(session="s1")
        assert [c.id for c in waiting.calls] == ["call_1"]

        # The printed command, as a user would paste it.
        (line,) = [line for line in err.splitlines() if line.startswith("  approve:")]
        words = shlex.split(line.split(":", 1)[1])
        assert words[:5] == ["neuron-turn", "resume", "s1", "--approve", "call_1"]
        assert "--task-queue" in words and task_queue in words

        code, _, refused = await neuron_turn("resume", "s1", "--approve", "call_9", *remote)
        assert code == EXIT_DECISIONS, refused
        assert "call_9" in refused and "pending: call_1" in refused

        code, out, err = await neuron_turn(*words[1:])
        assert (code, out) == (0, "the sum is 5\n"), err
        assert await orchestrator.approvals(session="s1") == []

        # Decided once: the same decisions again find nothing paused.
        code, _, again = await neuron_turn(*words[1:])
        assert code == EXIT_DECISIONS, again
        assert "no workflow waits for approval in session 's1'" in again

        assert await hosting.interrupt() == 130


async def test_resume_with_no_worker_says_how_to_start_one_and_a_worker_then_resumes_once(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address, task_queue, state, remote = on_dev_server(dev_env, tmp_path, "unhosted")
    async with worker(address, task_queue, state, *APPROVING_TURN):
        code, _, err = await neuron_turn("run", "add", "--session", "s1", *remote)
        assert code == EXIT_AWAITING_APPROVAL, err
    # Its worker is gone: nothing answers which workflow waits on the session.
    approve = ("resume", "s1", "--approve", "call_1", *remote)
    code, _, unhosted = await neuron_turn(*approve, "--pickup-timeout", "1")

    async with worker(address, task_queue, state, *APPROVING_TURN):
        code_after, out, err = await neuron_turn(*approve)

    assert code == EXIT_ORCHESTRATOR, unhosted
    assert "no worker answered query 'approvals' about workflow " in unhosted
    start = f"start one with `neuron-turn worker --address {address} --task-queue {task_queue}`"
    assert start in unhosted
    assert (code_after, out) == (0, "the sum is 5\n"), err
