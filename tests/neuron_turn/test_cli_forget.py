"""`neuron-turn forget`: a conversation and everything kept of it, deleted for good.

Turns run for real with `run` (the fixture provider, the local orchestrator) on
a SQLite state file given with `--state`; the confirmation is asked on a real
pseudo-terminal, of the installed `neuron-turn` in a child process.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._errors import (
    EXIT_ERROR,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_STATE,
    EXIT_USAGE,
)
from neuron_turn.plugins import reset_plugin_manager
from tests.terminal import Terminal

from .test_cli_fork import ECHO

SCRIPT = str(Path(sys.executable).with_name("neuron-turn"))
PLUGINS = "fixture-plugin,state-sqlite,orch-local"
ANSWER = "forget session 'trip'? [y/N] "


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The state file the commands are given with `--state`; no other is used."""
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "elsewhere.db"))
    reset_plugin_manager()
    yield tmp_path / "state.db"
    reset_plugin_manager()
    assert not (tmp_path / "elsewhere.db").exists()


def _run(state: Path, session: str, *prompts: str) -> None:
    for prompt in prompts:
        assert main(["run", prompt, *ECHO, "--session", session, "--state", str(state)]) == 0


def _rows(state: Path) -> list[tuple[object, ...]]:
    """Every row the file keeps of any session: values, appends, turn records."""
    with closing(sqlite3.connect(f"file:{state}?mode=ro", uri=True)) as connection:
        return [
            *connection.execute("SELECT id, scope, key, value, body FROM entries ORDER BY id"),
            *connection.execute("SELECT * FROM appended ORDER BY id"),
            *connection.execute("SELECT * FROM turns ORDER BY turn_id"),
        ]


def _of(rows: list[tuple[object, ...]], session: str) -> list[tuple[object, ...]]:
    return [row for row in rows if any(session in str(cell) for cell in row)]


def _forget(state: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["forget", *argv, "--state", str(state)])
    out, err = capsys.readouterr()
    return code, out, err.strip()


def test_forget_yes_deletes_the_conversation_its_turn_records_and_its_listing(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "trip", "plan a trip to banana island", "by train")
    _run(state, "other", "something else")
    other = _of(_rows(state), "other")
    assert _of(_rows(state), "trip") != []

    code, out, err = _forget(state, capsys, "trip", "--yes")

    assert (code, out) == (EXIT_OK, "")
    assert err == (
        "neuron-turn: forgot session 'trip': 4 message(s), 2 turn record(s), 0 other key(s), "
        "3 key(s) listing it in `neuron-turn sessions`"
    )
    assert _of(_rows(state), "trip") == []
    assert _of(_rows(state), "other") == other
    capsys.readouterr()
    assert main(["history", "trip", "--state", str(state)]) == EXIT_NOT_FOUND
    assert main(["show", "--session", "trip", "--state", str(state)]) == EXIT_NOT_FOUND
    assert "no session 'trip'" in capsys.readouterr().err
    assert main(["sessions", "--json", "--state", str(state)]) == EXIT_OK
    assert [e["session"] for e in json.loads(capsys.readouterr().out)] == ["other"]


def test_json_says_what_went(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(state, "trip", "one")

    code, out, _ = _forget(state, capsys, "trip", "--yes", "--json")

    forgotten = json.loads(out)
    assert code == EXIT_OK
    assert forgotten["sessions"] == [
        {
            "session": "trip",
            "messages": 2,
            "keys": ["messages"],
            "turns_recorded": 1,
            "delegated_turns": [],
        }
    ]
    assert forgotten["listed"][0] == "neuron-turn/sessions/trip"
    assert [key.rsplit("/", 2)[-2] for key in forgotten["listed"][1:]] == ["trip"]
    assert forgotten["entries"] == 1 + 1 + 2  # the history, a turn record, two global keys


def test_without_yes_or_a_terminal_it_refuses_naming_yes_and_deletes_nothing(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "trip", "one")
    before = _rows(state)

    code, out, err = _forget(state, capsys, "trip")

    assert (code, out) == (EXIT_USAGE, "")
    assert err == (
        "neuron-turn: error: forget deletes for good, so it asks first and there is no "
        "terminal to ask on; give --yes to forget session 'trip': 2 message(s), "
        "1 turn record(s), 0 other key(s), 2 key(s) listing it in `neuron-turn sessions`"
    )
    assert _rows(state) == before


def test_an_unknown_session_exits_not_found_naming_the_nearest_and_creates_no_file(
    state: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _run(state, "trip", "one")
    before = _rows(state)

    assert _forget(state, capsys, "trpi", "--yes") == (
        EXIT_NOT_FOUND,
        "",
        "neuron-turn: error: nothing is kept of session 'trpi' to forget (did you mean "
        "'trip'?); `neuron-turn sessions` lists the kept ones",
    )
    assert _rows(state) == before
    capsys.readouterr()
    missing = tmp_path / "missing.db"
    assert main(["forget", "trip", "--yes", "--state", str(missing)]) == EXIT_NOT_FOUND
    assert not missing.exists()


def test_a_store_refusing_part_way_exits_state_and_deletes_nothing(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "trip", "one")
    before = _rows(state)
    with closing(sqlite3.connect(state, isolation_level=None)) as connection:
        connection.execute(
            "CREATE TRIGGER keep_turns BEFORE DELETE ON turns "
            "BEGIN SELECT RAISE(ABORT, 'refused by test'); END"
        )

    code, out, err = _forget(state, capsys, "trip", "--yes")

    assert (code, out) == (EXIT_STATE, "")
    assert err.startswith("neuron-turn: error: session 'trip' was not forgotten: ")
    assert "refused by test" in err
    assert err.endswith("(the store deletes all of it in one transaction, or nothing)")
    assert _rows(state) == before


def test_a_history_that_does_not_parse_is_refused_unless_only_this(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "trip", "one")
    with closing(sqlite3.connect(state, isolation_level=None)) as connection:
        connection.execute("UPDATE entries SET value = '[{\"role\": 7}]' WHERE key = 'messages'")
        connection.execute("DELETE FROM appended")
    before = _rows(state)

    code, _, err = _forget(state, capsys, "trip", "--yes")

    assert code == EXIT_ERROR
    assert "--only-this" in err and "nothing was deleted" in err
    assert _rows(state) == before
    assert _forget(state, capsys, "trip", "--yes", "--only-this")[0] == EXIT_OK
    assert _of(_rows(state), "trip") == []


def _terminal(state: Path, tmp_path: Path) -> Terminal:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_")}
    env = environ | {"NEURON_LOAD_PLUGINS": PLUGINS, "NEURON_STATE_PATH": str(tmp_path / "x")}
    return Terminal([SCRIPT, "forget", "trip", "--state", str(state)], env=env)


def test_on_a_terminal_it_shows_what_will_go_and_forgets_on_yes(
    state: Path, tmp_path: Path
) -> None:
    _run(state, "trip", "one")

    with _terminal(state, tmp_path) as terminal:
        terminal.expect(r"forget session 'trip'\? \[y/N\] ")
        terminal.send(b"y\n")
        code = terminal.wait()
        shown = terminal.output

    assert code == EXIT_OK
    assert (
        "this deletes for good session 'trip': 2 message(s), 1 turn record(s), 0 other "
        "key(s), 2 key(s) listing it in `neuron-turn sessions`" in shown
    )
    assert "forgot session 'trip'" in shown
    assert _of(_rows(state), "trip") == []


def test_on_a_terminal_any_other_answer_deletes_nothing(state: Path, tmp_path: Path) -> None:
    _run(state, "trip", "one")
    before = _rows(state)

    with _terminal(state, tmp_path) as terminal:
        terminal.expect(r"\[y/N\] ")
        terminal.send(b"\n")
        code = terminal.wait()
        shown = terminal.output

    assert code == EXIT_ERROR
    assert "not forgotten: nothing was deleted" in shown
    assert _rows(state) == before
