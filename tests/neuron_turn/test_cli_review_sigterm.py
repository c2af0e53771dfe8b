"""SIGTERM (`timeout`, `kill`, systemd) stops a command as Ctrl-C does, keeping what ran.

Its default ended Python at once: the tool calls a turn had made were lost from
the session (they ran all the same), and a chat's answer with them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from neuron_turn.cli._errors import EXIT_TERMINATED
from tests.terminal import Terminal

from .cli_process import fixture_env, neuron_turn

TURN = ["--model", "fixture:tool-stall", "--tool", "fixture_add"]


def _roles(env: dict[str, str], session: str) -> list[str]:
    done = neuron_turn(env, "history", session, "--json")
    assert done.returncode == 0, done.stderr
    return [message["role"] for message in json.loads(done.stdout)]


def test_sigterm_after_a_tool_ran_keeps_it_and_says_how_to_resume(tmp_path: Path) -> None:
    env = fixture_env(tmp_path)
    argv = [sys.executable, "-m", "neuron_turn", "run", "add", *TURN, "--session", "t1"]
    with subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as run:
        assert run.stdout is not None and run.stderr is not None
        assert run.stdout.read(len("stalled ")) == b"stalled "  # the tool ran; the answer waits
        run.send_signal(signal.SIGTERM)
        err = run.stderr.read().decode()
        assert run.wait(timeout=60) == EXIT_TERMINATED, err
    assert "error: terminated (SIGTERM); its tools' results are kept in session t1" in err
    assert "neuron-turn resume t1" in err
    assert _roles(env, "t1") == ["user", "assistant", "user"]


def test_sigterm_ends_a_chat_keeping_the_answers_tool_calls(tmp_path: Path) -> None:
    env = fixture_env(tmp_path)
    argv = [sys.executable, "-m", "neuron_turn", "chat", *TURN, "--session", "t2"]
    with Terminal(argv, env=env) as terminal:
        terminal.expect("> ")
        terminal.send(b"add\r")
        terminal.expect("stalled ")
        os.kill(terminal.process.pid, signal.SIGTERM)
        terminal.expect(r"session t2 \(continue with: neuron-turn chat --session t2\)")
        assert terminal.wait() == EXIT_TERMINATED
    assert _roles(env, "t2") == ["user", "assistant", "user"]


def test_sigterm_with_ctrl_c_ignored_still_ends_the_command(tmp_path: Path) -> None:
    # A shell's background job ignores SIGINT: SIGTERM must not be ignored with it.
    env = fixture_env(tmp_path)
    argv = [sys.executable, "-m", "neuron_turn", "run", "add", *TURN, "--session", "t3"]
    with subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    ) as run:
        assert run.stdout is not None
        assert run.stdout.read(len("stalled ")) == b"stalled "
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=60) == -signal.SIGTERM


# A command whose turn waits on a thread no cancellation reaches (a read that never returns).
STUCK = """
import asyncio, sys, threading
import neuron_turn.cli._termination as termination

termination.GRACE = float(sys.argv[1])
never = threading.Event()

def blocked() -> None:
    print("ready", flush=True)
    never.wait()

async def turn() -> None:
    try:
        await asyncio.to_thread(blocked)
    except asyncio.CancelledError:
        print("stopping", flush=True)
        raise

with termination.stopped_by_sigterm_as_by_ctrl_c():
    asyncio.run(turn())
"""


def _stuck(grace: float) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", STUCK, str(grace)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    return child


def test_a_command_stuck_past_the_grace_after_sigterm_is_ended() -> None:
    with _stuck(grace=0.2) as child:
        child.send_signal(signal.SIGTERM)
        try:
            assert child.wait(timeout=30) == EXIT_TERMINATED
        finally:
            child.kill()  # never left running when the check fails


def test_a_second_sigterm_ends_a_stuck_command_at_once() -> None:
    with _stuck(grace=600) as child:
        child.send_signal(signal.SIGTERM)
        assert child.stdout is not None and child.stdout.readline() == "stopping\n"
        child.send_signal(signal.SIGTERM)
        try:
            assert child.wait(timeout=30) == -signal.SIGTERM
        finally:
            child.kill()


def test_a_command_that_stopped_in_time_leaves_no_grace_timer_to_end_its_caller() -> None:
    import signal

    from neuron_turn.cli import _termination

    told: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: told.append(signum))
    try:
        with _termination.stopped_by_sigterm_as_by_ctrl_c():
            _termination._on_sigterm(signal.SIGTERM, None)
            (timer,) = _termination._grace_timers
        assert told == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)

    timer.join(timeout=5)  # cancelled: it ends at once, without calling os._exit
    assert not timer.is_alive() and _termination._grace_timers == []
