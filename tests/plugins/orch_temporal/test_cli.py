"""`neuron-turn worker` and `neuron-turn run --orchestrator temporal` as real processes.

They meet on the real dev server, in real time, as separate processes do in
use (the time-skipping server skips time only while this process's own
client waits on a result).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shlex
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from layer0 import SessionScope
from neuron_state_sqlite import SqliteStore
from neuron_turn import KEPT_COUNTS_KEY
from tests.plugins.tracing_otel.receiver import otlp_receiver

pytestmark = pytest.mark.asyncio(loop_scope="session")

PLUGINS: Final = "fixture-plugin,state-sqlite,orch-local,orch-temporal"
COMMAND: Final = (sys.executable, "-m", "neuron_turn")

WAIT: Final = 30.0
"""Seconds any one step may take before the test fails."""


SUMMARY: Final = re.compile(r"complete, 1 turn, 12 tokens in / 3 out, \$0\.0006, \d+\.\ds")
HINT: Final = re.compile(r"session (\w+) \(continue with --session \1\)")
WAITING: Final = "neuron-turn: waiting for "
"""The waiting line a piped run prints after a long silence (cli/_waiting.py)."""


def _environment(**extra: str) -> dict[str, str]:
    env = {**os.environ, "NEURON_LOAD_PLUGINS": PLUGINS}
    for variable in ("NEURON_DISABLE_PLUGINS", "NEURON_STRICT_PLUGINS", "NEURON_STATE_PATH"):
        env.pop(variable, None)
    return env | extra


async def neuron_turn(*args: str, wait: float = WAIT) -> tuple[int, str, str]:
    """Run `neuron-turn ARGS` to its end; return its exit code, stdout and stderr."""
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_environment(),
    )
    try:
        async with asyncio.timeout(wait):
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


class CommandProcess:
    """A running `neuron-turn` command (a worker, a run), its stderr read as the test goes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.stderr: list[str] = []

    async def expect(self, text: str) -> None:
        """Read stderr until a line holding `text`; fail if the process ends first."""
        assert self.process.stderr is not None
        async with asyncio.timeout(WAIT):
            while line := await self.process.stderr.readline():
                self.stderr.append(line.decode())
                if text in self.stderr[-1]:
                    return
        raise AssertionError(f"the command ended without {text!r}: {''.join(self.stderr)}")

    async def interrupt(self) -> int:
        """Send SIGINT (Ctrl-C), wait for the exit and return its code."""
        self.process.send_signal(signal.SIGINT)
        try:
            async with asyncio.timeout(WAIT):
                _, rest = await self.process.communicate()
        except TimeoutError:
            # Which of the two it waits on did not come says where to look next time.
            code = self.process.returncode
            state = "still running" if code is None else f"exited {code}, stderr still open"
            raise AssertionError(
                f"the command did not finish within {WAIT} s of SIGINT ({state}); "
                f"stderr so far: {''.join(self.stderr)}"
            ) from None
        self.stderr.append(rest.decode())
        assert self.process.returncode is not None
        return self.process.returncode


STALLING: Final = ("--model", "fixture:tool-stall", "--tool", "fixture_add")
"""A worker's turn whose answer after its tool's result waits until cancelled."""


def on_dev_server(
    dev_env: WorkflowEnvironment, tmp_path: Path, label: str
) -> tuple[str, str, Path, list[str]]:
    """A fresh task queue on the dev server: its address, queue, state file and `run` options."""
    address = dev_env.client.service_client.config.target_host
    task_queue = f"{label}-{uuid.uuid4()}"
    state = tmp_path / "state.db"
    remote = ["--orchestrator", "temporal", "--temporal-address", address]
    remote += ["--task-queue", task_queue, "--state", str(state)]
    return address, task_queue, state, remote


@asynccontextmanager
async def worker(
    address: str, task_queue: str, state: Path, *turn: str, **environ: str
) -> AsyncIterator[CommandProcess]:
    """Start `neuron-turn worker` building its turn from `turn` (default: the echo model).

    Yields once it says it hosts agent `main`: printed once the turn is built,
    before the worker polls, which is enough, since a dispatch waits for a worker
    to pick it up (up to its 30 s pickup timeout). `environ` adds to its
    environment. It is killed on the way out if still running.
    """
    async with command(
        "worker",
        *("--orchestrator", "temporal", "--address", address, "--task-queue", task_queue),
        *(turn or ("--model", "fixture:echo")),
        *("--state", str(state)),
        **environ,
    ) as process:
        await process.expect("neuron-turn: worker for temporal hosting agent 'main'")
        yield process


@asynccontextmanager
async def command(*args: str, **environ: str) -> AsyncIterator[CommandProcess]:
    """Start `neuron-turn ARGS`, its stderr read as the test goes; killed on the way out.

    `environ` adds to its environment.
    """
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        *args,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=_environment(**environ),
    )
    try:
        yield CommandProcess(process)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_a_worker_process_answers_runs_and_keeps_their_session(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address, task_queue, state, remote = on_dev_server(dev_env, tmp_path, "cli")
    async with worker(address, task_queue, state) as hosting:
        code, out, err = await neuron_turn("run", "hello", *remote)
        assert (code, out) == (0, "echo: hello\n"), err
        # A slow machine may also say what the run waits for (after 10 s of silence).
        summary, hint = [line for line in err.splitlines() if not line.startswith(WAITING)]
        assert SUMMARY.fullmatch(summary), err
        found = HINT.fullmatch(hint)
        assert found is not None, err
        session = found.group(1)

        code, out, err = await neuron_turn("run", "again", "--session", session, *remote)
        assert (code, out) == (0, "echo: again\n"), err
        assert err.splitlines()[-1] == hint

        code, out, err = await neuron_turn("history", session, "--state", str(state))
        conversation = (
            "user (turn 1): hello\nassistant: echo: hello\n"
            "user (turn 2): again\nassistant: echo: again\n"
        )
        assert (code, out) == (0, conversation), err

        assert await hosting.interrupt() == 130
    stderr = "".join(hosting.stderr)
    assert "Traceback" not in stderr, stderr
    assert stderr.splitlines()[-1] == "neuron-turn: error: interrupted", stderr


async def test_a_run_with_no_worker_says_to_start_one(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address = dev_env.client.service_client.config.target_host
    task_queue = f"nobody-{uuid.uuid4()}"
    code, out, err = await neuron_turn(
        "run",
        "hello",
        "--orchestrator",
        "temporal",
        "--temporal-address",
        address,
        "--task-queue",
        task_queue,
        "--state",
        str(tmp_path / "state.db"),
        "--pickup-timeout",
        "1",
        wait=WAIT,
    )
    assert (code, out) == (10, ""), err
    (line,) = err.splitlines()
    assert line.startswith("neuron-turn: error: no worker picked up workflow 'main-"), line
    assert f"on task queue {task_queue!r} within 1 s" in line
    start = f"neuron-turn worker --address {address} --task-queue {task_queue}"
    assert f"start one with `{start}`" in line


async def test_a_run_against_no_server_is_one_line_and_exit_10(tmp_path: Path) -> None:
    code, out, err = await neuron_turn(
        "run",
        "hello",
        "--orchestrator",
        "temporal",
        "--temporal-address",
        "127.0.0.1:1",
        "--model",
        "fixture:echo",
        "--state",
        str(tmp_path / "state.db"),
        wait=WAIT,
    )
    assert (code, out) == (10, ""), err
    note, line = err.splitlines()
    assert note.startswith("neuron-turn: note: with --orchestrator temporal the worker builds")
    assert "--model apply to `neuron-turn worker`" in note
    assert line.startswith("neuron-turn: error: cannot reach a Temporal server at 127.0.0.1:1")


async def test_a_worker_with_trace_sends_the_spans_of_the_turns_it_runs(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address, task_queue, state, remote = on_dev_server(dev_env, tmp_path, "traced")
    token = secrets.token_urlsafe()
    with otlp_receiver(token) as received:
        tracing = {
            "NEURON_LOAD_PLUGINS": f"{PLUGINS},tracing-otel",
            "OTEL_EXPORTER_OTLP_ENDPOINT": received.url,
            "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{token}",
        }
        async with worker(
            address, task_queue, state, "--model", "fixture:echo", "--trace", **tracing
        ) as hosting:
            code, out, err = await neuron_turn("run", "hello", *remote)
            assert (code, out) == (0, "echo: hello\n"), err
            # Spans leave in batches; the worker's orderly exit sends what is left.
            assert await hosting.interrupt() == 130
    # The turn ran in the worker: its spans come from there, `run` itself traced nothing.
    assert sorted(s.name for s in received.spans) == ["chat echo", "invoke_agent neuron_turn"]
    assert received.refused == 0


async def test_ctrl_c_on_a_run_stops_its_workflow_keeping_what_the_tool_did(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address, task_queue, state, remote = on_dev_server(dev_env, tmp_path, "ctrl-c")
    async with worker(address, task_queue, state, *STALLING):
        async with command("run", "add", "--session", "s5", "--verbose", *remote) as run:
            await run.expect("[tool] fixture_add -> 5")  # the tool ran; the answer after waits
            assert await run.interrupt() == 130
        code, out, err = await neuron_turn("history", "s5", "--json", "--state", str(state))
        assert code == 0, err
        listed = dev_env.client.list_workflows(f"TaskQueue = '{task_queue}'")
        statuses = [workflow.status async for workflow in listed]

    # Said at once, while the worker has yet to hear of it; then the usual last line.
    said = "".join(run.stderr).splitlines()
    stopping = said.index("neuron-turn: stopping the turn on its worker (at its next heartbeat)")
    # It ends saying how to go on from the tool's result kept in the session, within
    # what the turn left of its limits (the worker's default of 10 model calls, one spent).
    resume = shlex.join(["neuron-turn", "resume", "s5", "--max-turns", "9", *remote])
    assert said[-1] == (
        "neuron-turn: error: interrupted; its tools' results are kept in session s5, "
        f"so continue it with `{resume}` rather than running it again"
    ), said
    # A wait for the worker past 10 s is said to be one, not a wait for the model.
    waits = said[stopping + 1 : -1]
    assert all(line.startswith(f"{WAITING}the worker to stop the turn (") for line in waits), said
    # The workflow stopped with the command, its tool's call and result kept.
    assert statuses == [WorkflowExecutionStatus.CANCELED]
    assert [message["role"] for message in json.loads(out)] == ["user", "assistant", "user"]
    # With the counts its loop kept, which the command's continuation reads there.
    async with SqliteStore(state) as store:
        kept = await store.read(SessionScope(id="s5"), KEPT_COUNTS_KEY)
    assert kept == {
        "after": "call_1",
        "failures_in_a_row": 0,
        "identical_calls": 1,
        "last_call": {"name": "fixture_add", "input": {"a": 2, "b": 3}},
        "output_failures": 0,
    }

    # The command it names goes on from there (on a worker whose model answers now).
    answering = ("--model", "fixture:tool", "--tool", "fixture_add")
    async with worker(address, task_queue, state, *answering):
        code, answer, err = await neuron_turn(*shlex.split(resume)[1:])
        assert code == 0, err
        code, out, err = await neuron_turn("history", "s5", "--json", "--state", str(state))
        assert code == 0, err
    assert answer.strip() == "the sum is 5"
    roles = [message["role"] for message in json.loads(out)]
    assert roles == ["user", "assistant", "user", "assistant"]  # the tool did not run again


async def test_ctrl_c_on_a_run_whose_worker_was_killed_says_the_workflow_waits_for_another(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address, task_queue, state, remote = on_dev_server(dev_env, tmp_path, "killed")
    async with worker(address, task_queue, state, *STALLING) as hosting:
        running = ("run", "add", "--session", "s6", "--verbose", *remote, "--pickup-timeout", "1")
        async with command(*running) as run:
            await run.expect("[tool] fixture_add -> 5")
            hosting.process.kill()  # SIGKILL: the worker hands nothing back
            await hosting.process.wait()
            assert await run.interrupt() == 130
        listed = dev_env.client.list_workflows(f"TaskQueue = '{task_queue}'")
        [workflow_id] = [workflow.id async for workflow in listed]
        description = await dev_env.client.get_workflow_handle(workflow_id).describe()

    # The cancel waits in Temporal for a worker to take it, and the line says so.
    said = "".join(run.stderr).splitlines()
    assert said[-1] == (
        f"neuron-turn: error: interrupted; workflow {workflow_id} was not seen to stop: "
        f"workflow {workflow_id!r} is cancelled, but no worker took the cancellation within "
        f"1 s; it ends, keeping what its turn did, once a worker polls task queue "
        f"{task_queue!r}: start one with `neuron-turn worker --address {address} "
        f"--task-queue {task_queue}`"
    ), said
    assert description.status == WorkflowExecutionStatus.RUNNING


async def test_a_runs_usage_limits_and_stop_tools_travel_to_the_worker(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address, task_queue, state, remote = on_dev_server(dev_env, tmp_path, "limits")
    adding = ("--model", "fixture:tool", "--tool", "fixture_add")
    async with worker(address, task_queue, state, *adding):
        # The worker's turn ends on the tool's result: no model call after it.
        code, out, err = await neuron_turn("run", "add", *remote, "--stop-at-tool", "fixture_add")
        assert (code, out) == (0, "5\n"), err
        assert "complete, 1 turn," in err

        # The worker's turn runs no call past the run's limit, and says which limit.
        code, out, err = await neuron_turn("run", "add", *remote, "--max-tool-calls", "0")
        assert code == 0, err
        assert (
            "neuron-turn: Stopped at the turn's limit of 0 tool calls: the model asked for 1 in "
            "all, none of its last calls ran (--max-tool-calls)"
        ) in err


async def test_a_run_attaching_a_large_image_needs_the_workers_payload_dir_and_goes_through_with_it(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address, task_queue, state, remote = on_dev_server(dev_env, tmp_path, "cli-payloads")
    image = tmp_path / "scan.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + secrets.token_bytes(3_000_000))
    payloads = tmp_path / "payloads"
    kept = ("--payload-dir", str(payloads))
    async with worker(address, task_queue, state, "--model", "fixture:echo", *kept):
        # Without it, the run's own client sends the image inline, and the server refuses it.
        code, out, err = await neuron_turn("run", "describe", "--attach", str(image), *remote)
        assert (code, out) == (10, ""), err  # the answer's stream holds no SDK log line
        (line,) = [line for line in err.splitlines() if "[sdk_core::" not in line]
        assert line.startswith("neuron-turn: error: agent 'main': the turn's input is larger")
        assert "--payload-dir DIR" in line
        code, out, err = await neuron_turn(
            "run", "describe", "--attach", str(image), *remote, *kept
        )
        assert (code, out) == (0, "echo: describe\n"), err
    assert any(p.is_file() for p in payloads.rglob("*"))
