"""A turn that fails or is stopped after its tools ran: `run` retries from there, or says how to
`resume` it."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_RETRYABLE
from tests.terminal import CTRL_C, Terminal

pytestmark = pytest.mark.usefixtures("fixture_plugins")

TURN = ["--model", "fixture:tool-limit", "--tool", "fixture_add"]


def events_of(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def test_a_retry_after_the_tool_ran_goes_on_from_its_result(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "add, retried", *TURN, "--session", "s1", "--jsonl"]) == EXIT_OK
    events = events_of(capsys.readouterr().out)
    assert [e["type"] for e in events].count("tool_result") == 1
    last = events[-1]
    assert last["type"] == "turn_done"
    assert "the sum is 5" in json.dumps(last)


def test_a_run_failing_after_the_tool_ran_says_how_to_resume_and_resume_goes_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "add, resumed", *TURN, "--session", "s2", "--retries", "0"]) == (
        EXIT_RETRYABLE
    )
    error = capsys.readouterr().err.splitlines()[-1]  # one line, after the new-session note
    assert error.startswith("neuron-turn: error: the provider failed (")
    # What the turn left of its limits: the default of 10 model calls, one spent.
    assert error.endswith(
        "; its tools' results are kept in session s2, so continue it with "
        "`neuron-turn resume s2 --model fixture:tool-limit --tool fixture_add "
        "--max-turns 9 --retries 0` rather than running it again"
    )

    assert main(["resume", "s2", *TURN, "--jsonl"]) == EXIT_OK
    events = events_of(capsys.readouterr().out)
    assert "tool_result" not in [e["type"] for e in events]  # the tool does not run again
    assert "the sum is 5" in json.dumps(events[-1])


def test_resume_with_nothing_to_continue_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hello", "--model", "fixture:echo", "--session", "s3"]) == EXIT_OK
    capsys.readouterr()
    assert main(["resume", "s3", "--model", "fixture:echo"]) != EXIT_OK
    err = capsys.readouterr().err
    assert "session 's3' has a last message from 'assistant'" in err


def test_ctrl_c_after_the_tool_ran_keeps_it_and_says_how_to_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = str(tmp_path / "state.db")
    env = {**os.environ, "NEURON_LOAD_PLUGINS": "fixture-plugin,state-sqlite,orch-local"}
    turn = ["--model", "fixture:tool-stall", "--tool", "fixture_add", "--state", state]
    argv = [sys.executable, "-m", "neuron_turn", "run", "add", *turn, "--session", "s4"]
    with Terminal(argv, env=env) as terminal:
        terminal.expect("stalled ")  # the tool ran, and the answer after it waits: Ctrl-C
        terminal.send(CTRL_C)
        terminal.expect(
            r"neuron-turn: error: interrupted; its tools' results are kept in session s4"
        )
        assert terminal.wait() == EXIT_INTERRUPTED
        assert "`neuron-turn resume s4 --model fixture:tool-stall --tool fixture_add" in (
            terminal.output
        )

    monkeypatch.setenv("NEURON_STATE_PATH", state)
    assert main(["history", "s4", "--json"]) == EXIT_OK
    history = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]


def test_the_resume_command_carries_what_the_failed_part_left_of_the_limits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    limits = ["--max-turns", "5", "--max-cost", "1", "--max-duration", "600"]
    argv = ["run", "add, within limits", *TURN, "--session", "s5", "--retries", "0", *limits]
    assert main(argv) == EXIT_RETRYABLE
    error = capsys.readouterr().err.splitlines()[-1]
    command = shlex.split(error.split("`")[1])

    # One model call and its tool ran: four calls and all but its cost are left.
    assert command[command.index("--max-turns") + 1] == "4"
    assert command[command.index("--max-cost") + 1] == "0.9994"
    assert 0 < float(command[command.index("--max-duration") + 1]) < 600
    assert main(command[1:]) == EXIT_OK
    assert "the sum is 5" in capsys.readouterr().out


def test_the_resume_command_carries_what_the_failed_part_left_of_the_usage_limits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    limits = ["--max-tool-calls", "3", "--max-total-tokens", "100000"]
    argv = ["run", "add, within usage limits", *TURN, "--session", "s7", "--retries", "0", *limits]
    assert main(argv) == EXIT_RETRYABLE
    error = capsys.readouterr().err.splitlines()[-1]
    command = shlex.split(error.split("`")[1])

    # One tool call ran; the tokens of one model call were spent.
    assert command[command.index("--max-tool-calls") + 1] == "2"
    assert 0 < int(command[command.index("--max-total-tokens") + 1]) < 100000
    assert main(command[1:]) == EXIT_OK
    assert "the sum is 5" in capsys.readouterr().out


def test_resume_counts_on_from_the_calls_the_failed_part_made(
    capsys: pytest.CaptureFixture[str],
) -> None:
    turn = ["--model", "fixture:repeat-limit", "--tool", "fixture_add"]
    argv = ["run", "add, again and again", *turn, "--session", "s6", "--retries", "0"]
    assert main(argv) == EXIT_RETRYABLE
    error = capsys.readouterr().err.splitlines()[-1]
    command = shlex.split(error.split("`")[1])

    assert main([*command[1:], "--jsonl"]) == EXIT_OK
    events = events_of(capsys.readouterr().out)
    # The part made the same call twice, so the stuck check (more than three in a row)
    # ends the turn on the resume's second, not its fourth.
    assert [e["type"] for e in events].count("tool_result") == 2
    assert events[-1]["output"]["exit_reason"] == {"custom": "stuck_detected"}  # type: ignore[index]
