"""Output whose reader went away (`neuron-turn ... | head -1`): dropped, the turn kept whole."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from neuron_turn.cli._closed_output import DroppedWhenClosed

from .cli_process import fixture_env, neuron_turn


def _with_stdout_closed(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    """Run `neuron-turn argv...` writing to a pipe whose reader has already gone."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            [sys.executable, "-m", "neuron_turn", *argv],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)


def test_a_turn_whose_reader_went_away_completes_and_its_answer_is_kept(
    tmp_path: Path,
) -> None:
    env = fixture_env(tmp_path)
    done = _with_stdout_closed(
        env, "run", "--model", "fixture:tool", "--tool", "fixture_add", "--session", "p1", "add"
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "complete, 2 turns" in done.stderr
    kept = neuron_turn(env, "history", "p1", "--json")
    assert json.loads(kept.stdout)[-1]["content"] == "the sum is 5"
    listed = neuron_turn(env, "sessions", "--json")
    assert [entry["session"] for entry in json.loads(listed.stdout)] == ["p1"]


def test_a_listing_whose_reader_went_away_ends_quietly(tmp_path: Path) -> None:
    env = fixture_env(tmp_path)
    first = neuron_turn(env, "run", "--model", "fixture:echo", "--session", "p2", "hi")
    assert first.returncode == 0, first.stderr
    listings = [
        ["history", "p2"],
        ["sessions"],
        ["show"],
        ["run", "--json", "--model", "fixture:echo", "--session", "p2", "again"],
    ]
    for argv in listings:
        done = _with_stdout_closed(env, *argv)
        assert (done.returncode, done.stderr) == (0, ""), argv


def test_writes_after_the_reader_went_away_are_dropped_and_the_first_one_kept() -> None:
    class Closing(io.StringIO):
        def flush(self) -> None:
            if "gone" in self.getvalue():
                raise BrokenPipeError(32, "Broken pipe")

    stream = Closing()
    out = DroppedWhenClosed(stream)
    out.write("first\n")
    out.flush()
    out.write("gone\n")
    out.flush()
    assert out.reader_gone
    assert out.write("more\n") == len("more\n")
    out.flush()
    assert stream.getvalue() == "first\ngone\n"


def _with_closed(fds: tuple[int, ...], env: dict[str, str], *argv: str) -> subprocess.Popen[str]:
    """Start `neuron-turn argv...` with standard descriptors `fds` closed, as `<&-` closes them."""

    def close() -> None:
        for fd in fds:
            os.close(fd)

    return subprocess.Popen(
        [sys.executable, "-m", "neuron_turn", *argv],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=close,
    )


def test_a_chat_whose_input_was_closed_ends_at_once(tmp_path: Path) -> None:
    with _with_closed((0,), fixture_env(tmp_path), "chat", "--model", "fixture:echo") as chat:
        _, err = chat.communicate(timeout=60)
    assert chat.returncode == 0, err
    assert "Traceback" not in err and "(continue with: neuron-turn chat --session" in err


def test_a_run_whose_output_was_closed_completes_and_is_kept(tmp_path: Path) -> None:
    env = fixture_env(tmp_path)
    argv = ("run", "--model", "fixture:echo", "--session", "c1", "hi")
    for closed in ((1,), (2,), (1, 2)):
        with _with_closed(closed, env, *argv) as run:
            _, err = run.communicate(timeout=60)
        assert run.returncode == 0, (closed, err)
    kept = json.loads(neuron_turn(env, "history", "c1", "--json").stdout)
    assert [m["content"] for m in kept] == ["hi", "echo: hi"] * 3


def test_a_closed_standard_descriptor_gets_the_null_device_not_the_next_file_opened(
    tmp_path: Path,
) -> None:
    # A child process (an MCP server) inherits descriptor 1: it must not be the state file.
    script = (
        "import os, sys\n"
        "from neuron_turn.cli._closed_output import output_may_close\n"
        "with output_may_close():\n"
        "    opened = open(sys.argv[1], 'w')\n"
        "    print(os.readlink('/proc/self/fd/1'), opened.fileno(), file=sys.stderr)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path / "state.db")],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.close(1),
    ) as child:
        _, err = child.communicate(timeout=60)
    target, opened = err.split()
    assert (target, opened != "1") == (os.devnull, True), err
