"""What a user names as input is read at most as far as a model request can carry.

A device that never ends (`/dev/zero`), a pipe or a growing file has no size
to check first: read whole, it would fill memory until the kernel killed the
command.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._reading import MAX_BYTES, TooLargeError, readline_bounded

from .cli_process import fixture_env

pytestmark = pytest.mark.usefixtures("fixture_plugins")

ENDLESS = "/dev/zero"
RUN = ["run", "--model", "fixture:echo"]


def test_an_endless_device_given_to_attach_is_refused_once_past_what_can_be_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*RUN, "--attach", ENDLESS, "look"]) == 2
    err = capsys.readouterr().err
    assert f"--attach '{ENDLESS}' holds more than {MAX_BYTES:,} bytes" in err


def test_an_endless_prompt_file_is_refused_once_past_what_can_be_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*RUN, "--prompt-file", ENDLESS]) == 2
    assert f"--prompt-file '{ENDLESS}' holds more than {MAX_BYTES:,} bytes" in (
        capsys.readouterr().err
    )


def test_an_endless_standard_input_is_refused_once_past_what_can_be_sent(
    tmp_path: Path,
) -> None:
    with open(ENDLESS, "rb") as endless:
        done = subprocess.run(
            [sys.executable, "-m", "neuron_turn", *RUN, "-"],
            stdin=endless,
            env=fixture_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    assert f"standard input holds more than {MAX_BYTES:,} bytes" in done.stderr


def test_an_endless_output_schema_is_refused_once_past_what_can_be_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*RUN, "--output-schema", ENDLESS, "hi"])
    assert exited.value.code == 2
    assert f"holds more than {MAX_BYTES:,} bytes" in capsys.readouterr().err


def test_a_line_past_the_bound_is_dropped_whole_and_the_next_line_read() -> None:
    source = io.BytesIO(b"x" * 100 + b"\nnext\n")
    with pytest.raises(TooLargeError):
        readline_bounded(source, limit=10)
    assert readline_bounded(source, limit=10) == b"next\n"


def test_a_chat_line_past_what_can_be_sent_is_refused_and_the_chat_goes_on(
    tmp_path: Path,
) -> None:
    lines = tmp_path / "lines.txt"
    with lines.open("wb") as file:
        file.write(b"y" * (MAX_BYTES + 10) + b"\nhello\n")
    with lines.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "neuron_turn", "chat", "--model", "fixture:echo"],
            stdin=stdin,
            env=fixture_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert f"that line holds more than {MAX_BYTES:,} bytes" in done.stderr
    assert "nothing was sent" in done.stderr
    assert done.stdout.strip().endswith("echo: hello")


def test_files_attached_together_past_what_one_request_carries_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    halves = []
    for name in ("a.txt", "b.txt"):
        half = tmp_path / name
        with half.open("wb") as file:
            file.truncate(MAX_BYTES // 2 + 1)  # sparse: nothing written
        halves.append(str(half))
    assert main([*RUN, "--attach", halves[0], "--attach", halves[1], "look"]) == 2
    err = capsys.readouterr().err
    assert f"--attach {halves[1]!r} is {MAX_BYTES // 2 + 1:,} bytes with the files attached" in err


def test_files_a_chat_attaches_to_one_message_past_what_it_carries_are_refused(
    tmp_path: Path,
) -> None:
    from types import SimpleNamespace

    from neuron_turn.cli.chat import _attach

    chat = SimpleNamespace(attached=[], attached_bytes=0)
    err = io.StringIO()
    halves = []
    for name in ("a.txt", "b.txt"):
        half = tmp_path / name
        with half.open("wb") as file:
            file.truncate(MAX_BYTES // 2 + 1)  # sparse: nothing written
        halves.append(str(half))

    _attach(halves[0], chat, err)  # type: ignore[arg-type]
    _attach(halves[1], chat, err)  # type: ignore[arg-type]

    assert len(chat.attached) == 1 and chat.attached_bytes == MAX_BYTES // 2 + 1
    assert "with the files attached before it" in err.getvalue()
    assert "nothing was attached" in err.getvalue()
