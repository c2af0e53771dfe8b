"""`run`'s prompt from the argument, standard input or a file; blank prompts are refused."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from layer0 import TurnOutput
from neuron_turn.cli import main
from neuron_turn.cli._errors import UsageError
from neuron_turn.cli._prompt import read_prompt
from tests.terminal import Terminal

PLUGINS = "fixture-plugin,state-sqlite,orch-local"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "state.db"),
    }


pytestmark = pytest.mark.usefixtures("fixture_plugins")


def run(
    env: dict[str, str], *argv: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "neuron_turn", "run", "--model", "fixture:echo", *argv]
    return subprocess.run(
        command,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        env=env,
        timeout=120,
    )


def test_a_dash_reads_the_prompt_from_stdin(env: dict[str, str]) -> None:
    done = run(env, "-", stdin=b"two words\n")
    assert done.returncode == 0, done.stderr
    # The pipe's final newline is not part of the message.
    assert done.stdout == b"echo: two words\n"


def test_no_prompt_with_stdin_a_pipe_reads_stdin(env: dict[str, str]) -> None:
    done = run(env, "--json", stdin="piped é".encode())
    assert done.returncode == 0, done.stderr
    assert TurnOutput.model_validate_json(done.stdout).message.as_text() == "echo: piped é"


def test_a_two_megabyte_prompt_from_stdin_reaches_the_model_whole(env: dict[str, str]) -> None:
    prompt = ("word " * 420_000).strip()  # 2 MB: far above what an argument may hold
    assert len(prompt.encode()) > 2 * 1024 * 1024
    done = run(env, "--json", stdin=prompt.encode())
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["message"] == "echo: " + prompt
    sent = result["effects"][-1]["data"]["messages"][0]["content"]
    assert sent == prompt


def test_prompt_file_reads_the_prompt_from_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "prompt.txt"
    path.write_text("from a file\n", encoding="utf-8")
    assert main(["run", "--model", "fixture:echo", "--prompt-file", str(path)]) == 0
    assert capsys.readouterr().out == "echo: from a file\n"


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t\n"])
def test_a_blank_prompt_is_a_usage_error(prompt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", prompt, "--model", "fixture:echo"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "neuron-turn: error: the prompt (PROMPT) is empty or blank; nothing was sent to the model\n"
    )


def test_an_empty_stdin_is_a_usage_error(env: dict[str, str]) -> None:
    done = run(env, "-", stdin=b"  \n")
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"the prompt (standard input) is empty or blank" in done.stderr


def test_prompt_sources_that_cannot_be_used_say_why(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.txt")
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe")
    cases = [
        (("x", str(binary), None), "give PROMPT or --prompt-file, not both"),
        ((None, missing, None), f"cannot read --prompt-file {missing!r}: No such file"),
        ((None, str(binary), None), f"--prompt-file {str(binary)!r} is not UTF-8 text"),
        (("-", None, None), "PROMPT is - but there is no standard input"),
        ((None, None, None), "no prompt: give PROMPT, - to read it from standard input"),
    ]
    for (given, path, stdin), message in cases:
        with pytest.raises(UsageError) as raised:
            read_prompt(given, path, stdin)
        assert str(raised.value).startswith(message)


def test_a_prompt_argument_that_is_not_utf8_is_a_usage_error_naming_the_byte(
    env: dict[str, str],
) -> None:
    # The OS hands the bytes over as they are; Python makes a lone surrogate of 0xff.
    done = run(env, os.fsdecode(b"hi \xff there"))
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"PROMPT is not UTF-8 text (byte 3)" in done.stderr


def test_a_prompt_argument_is_sent_as_given() -> None:
    assert read_prompt("  spaced \n", None, io.StringIO("ignored")) == "  spaced \n"


def test_no_prompt_on_a_terminal_is_a_usage_error_not_a_wait(env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "neuron_turn", "run", "--model", "fixture:echo"]
    with Terminal(command, env=env) as terminal:
        terminal.expect(r"neuron-turn: error: no prompt: give PROMPT, - to read it")
        assert terminal.wait() == 2
