"""Session ids and text on the command line, and stored histories, that cannot be used.

An argument whose bytes are not UTF-8 reaches Python as lone surrogates, which
no store keeps and no model API takes: a usage error naming the argument, never
a state file's error (exit 11) or text sent as it is. A stored history that does
not parse is one line naming the session, never a traceback.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE

from .test_cli_state_file import spoil_history

pytestmark = pytest.mark.usefixtures("fixture_plugins")

NOT_UTF8 = os.fsdecode(b"caf\xe9")  # Latin-1 bytes, as a shell in another locale passes them
RUN = ["run", "hi", "--model", "fixture:echo"]


@pytest.mark.parametrize(
    "argv",
    [
        [*RUN, "--session", NOT_UTF8],
        ["chat", "--model", "fixture:echo", "--session", NOT_UTF8],
        ["history", NOT_UTF8],
        ["show", "--session", NOT_UTF8],
        ["fork", NOT_UTF8],
        ["fork", "s", "--as", NOT_UTF8],
        ["forget", NOT_UTF8, "--yes"],
        ["revoke", NOT_UTF8],
        ["resume", NOT_UTF8],
    ],
    ids=["run", "chat", "history", "show", "fork", "fork-as", "forget", "revoke", "resume"],
)
def test_a_session_id_that_is_not_utf8_is_a_usage_error_naming_its_byte(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "the session id is not UTF-8 text (byte 3)" in err
    assert not (tmp_path / "state.db").exists()  # nothing was opened, nothing written


@pytest.mark.parametrize("flag", ["--system", "--stop"])
def test_text_for_the_model_that_is_not_utf8_is_a_usage_error(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*RUN, flag, NOT_UTF8])
    assert exited.value.code == EXIT_USAGE
    assert f"argument {flag}: it is not UTF-8 text (byte 3)" in capsys.readouterr().err


def test_a_blank_session_is_refused_rather_than_run_in_a_fresh_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*RUN, "--session", ""])
    assert exited.value.code == EXIT_USAGE
    assert "argument --session: a session id is not blank" in capsys.readouterr().err
    assert not (tmp_path / "state.db").exists()


def test_a_history_that_does_not_parse_is_one_line_naming_the_session_and_json_shows_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main([*RUN, "--session", "spoilt"]) == EXIT_OK
    spoil_history(tmp_path / "state.db", "spoilt")
    capsys.readouterr()

    assert main(["history", "spoilt"]) == EXIT_ERROR
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("neuron-turn: error: the history of session 'spoilt' does not parse")
    assert err.rstrip().endswith("`neuron-turn history spoilt --json` prints it as stored")
    assert len(err.splitlines()) == 1

    assert main(["history", "spoilt", "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out) == [{"role": "wizard"}]


def test_a_chats_back_with_a_number_past_what_python_reads_asks_again_and_goes_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(f"hi\n/back {'9' * 5000}\nafter\n"))
    assert main(["chat", "--model", "fixture:echo"]) == EXIT_OK
    out, err = capsys.readouterr()
    assert "/back needs how many of your messages to keep" in err
    assert "echo: after" in out
