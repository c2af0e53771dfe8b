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
