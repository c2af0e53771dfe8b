"""`neuron-turn fork`: the first turns of a conversation copied into a new session.

Turns run for real with `run` (the fixture provider, the local orchestrator) on
a SQLite state file given with `--state`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._errors import (
    EXIT_AWAITING_APPROVAL,
    EXIT_ERROR,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
)
from neuron_turn.plugins import reset_plugin_manager

from .test_cli_state_file import spoil_history

ECHO = ["--model", "fixture:echo"]
HELD = ["--model", "fixture:big-sum", "--tool", "fixture_add"]


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The state file the commands are given with `--state`; no other is used."""
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", "fixture-plugin,state-sqlite,orch-local")
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "elsewhere.db"))
    reset_plugin_manager()
    yield tmp_path / "state.db"
    reset_plugin_manager()
    assert not (tmp_path / "elsewhere.db").exists()


def _run(state: Path, session: str, *prompts: str, model: list[str] = ECHO) -> None:
    for prompt in prompts:
        assert main(["run", prompt, *model, "--session", session, "--state", str(state)]) == 0


def _history(
    state: Path, session: str, capsys: pytest.CaptureFixture[str]
) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(["history", session, "--json", "--state", str(state)]) == EXIT_OK
    history: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return history


def _dump(state: Path) -> list[str]:
    """Everything the state file holds, as SQL."""
    with closing(sqlite3.connect(f"file:{state}?mode=ro", uri=True)) as connection:
        return list(connection.iterdump())


def test_a_fork_of_two_of_three_turns_goes_on_from_turn_two_and_the_original_keeps_three(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "trip", "one", "two", "three")
    original = _history(state, "trip", capsys)

    code = main(["fork", "trip", "--turns", "2", "--state", str(state)])
    out, err = capsys.readouterr()
    forked = out.strip()
    _run(state, forked, "four")

    assert code == EXIT_OK
    assert err.splitlines()[-1] == (
        f"neuron-turn: forked the first 2 of 3 turns of session 'trip' into session {forked} "
        f"(continue with --session {forked})"
    )
    assert _history(state, forked, capsys) == [
        *original[:4],
        {"role": "user", "content": "four"},
        {"role": "assistant", "content": "echo: four"},
    ]
    assert _history(state, "trip", capsys) == original and len(original) == 6


def test_a_fork_never_cuts_inside_the_round_of_a_tool_call(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "sums", "add", model=["--model", "fixture:tool", "--tool", "fixture_add"])
    _run(state, "sums", "two", "three")

    assert main(["fork", "sums", "--turns", "1", "--as", "one", "--state", str(state)]) == 0
    history = _history(state, "one", capsys)

    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert history[-1] == {"role": "assistant", "content": "the sum is 5"}
    capsys.readouterr()
    assert main(["history", "one", "--state", str(state)]) == EXIT_OK
    assert "[result: 5]" in capsys.readouterr().out


def test_the_fork_is_listed_with_the_session_and_turn_it_came_from(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "trip", "plan a trip", "by train")
    assert main(["fork", "trip", "--turns", "1", "--as", "by-car", "--state", str(state)]) == 0
    capsys.readouterr()

    assert main(["sessions", "--json", "--state", str(state)]) == EXIT_OK
    entries = {e["session"]: e for e in json.loads(capsys.readouterr().out)}

    assert entries["by-car"]["title"] == "forked from trip at turn 1 of 2: plan a trip"
    assert entries["trip"]["title"] == "plan a trip"


def test_json_says_what_the_fork_holds(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(state, "trip", "one", "two")
    capsys.readouterr()

    assert main(["fork", "trip", "--as", "copy", "--json", "--state", str(state)]) == EXIT_OK

    assert json.loads(capsys.readouterr().out) == {
        "session": "copy",
        "source": "trip",
        "turns": 2,
        "source_turns": 2,
        "messages": 4,
    }


def _refused(state: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Run `fork ARGV`; return its code and its error line, after checking nothing changed."""
    before = _dump(state)
    capsys.readouterr()
    code = main(["fork", *argv, "--state", str(state)])
    out, err = capsys.readouterr()
    assert out == ""
    assert _dump(state) == before
    return code, err.strip()


def test_an_unknown_session_exits_not_found_naming_it_and_the_nearest_kept_ones(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "trip", "one")

    assert _refused(state, capsys, "trpi") == (
        EXIT_NOT_FOUND,
        "neuron-turn: error: no session 'trpi' to fork: it has no history (did you mean "
        "'trip'?); `neuron-turn sessions` lists the kept ones",
    )


def test_an_unknown_session_in_a_state_file_that_is_not_there_creates_no_file(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fork", "trip", "--state", str(state)]) == EXIT_NOT_FOUND

    assert "no session 'trip' to fork" in capsys.readouterr().err
    assert not state.exists()


@pytest.mark.parametrize("turns", ["0", "-2", "4"])
def test_a_count_of_turns_the_session_has_not_exits_2_naming_both(
    state: Path, capsys: pytest.CaptureFixture[str], turns: str
) -> None:
    _run(state, "trip", "one", "two", "three")

    assert _refused(state, capsys, "trip", "--turns", turns, "--as", "b") == (
        EXIT_USAGE,
        f"neuron-turn: error: --turns: cannot fork the first {turns} turns of session 'trip': "
        "it has 3 turns; give 1 to 3",
    )


def test_a_new_id_that_holds_a_history_exits_2_and_its_history_is_kept(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "trip", "one", "two")
    _run(state, "taken", "mine")

    assert _refused(state, capsys, "trip", "--as", "taken") == (
        EXIT_USAGE,
        "neuron-turn: error: --as: session 'taken' already holds a history of 2 message(s); a "
        "fork goes to a new session, so name one that holds nothing (or let a fresh id be made)",
    )


def test_a_blank_new_id_is_a_usage_error(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(state, "trip", "one")

    with pytest.raises(SystemExit) as exited:
        main(["fork", "trip", "--as", " ", "--state", str(state)])

    assert exited.value.code == EXIT_USAGE
    assert "argument --as: a session id is not blank" in capsys.readouterr().err


def test_a_fork_ending_on_a_turn_that_waits_exits_15_naming_its_call_and_where_to_fork(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "w", "hello")
    assert main(["run", "add", *HELD, "--session", "w", "--state", str(state)]) == 15

    code, line = _refused(state, capsys, "w")

    assert code == EXIT_AWAITING_APPROVAL
    assert line == (
        "neuron-turn: error: turn 2 of session 'w' waits for approval of call_1 (fixture_add): "
        "a fork there would wait on the same calls, and approving them in both sessions would "
        "run them twice; fork its first 1 turn instead, or decide them in 'w' first and fork "
        f"after (fork there with: neuron-turn fork w --turns 1 --state {state}; decide with: "
        "neuron-turn resume w --approve ID or --deny ID, and the options of the run that paused)"
    )
    assert main(["fork", "w", "--turns", "1", "--state", str(state)]) == EXIT_OK


def test_a_history_that_does_not_parse_exits_1_naming_the_session(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(state, "trip", "one")
    spoil_history(state, "spoilt")

    code, line = _refused(state, capsys, "spoilt")

    assert code == EXIT_ERROR
    assert line.startswith(
        "neuron-turn: error: the history of session 'spoilt' cannot be forked: it does not parse"
    )
    assert "Traceback" not in line


def test_a_fork_the_index_cannot_list_is_made_and_said_so_without_asking_to_fork_again(
    state: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from layer0 import WriteFailed
    from neuron_turn.cli import _fork

    async def refused(*args: object) -> None:
        raise WriteFailed("the disk is full")

    _run(state, "trip", "one")
    monkeypatch.setattr(_fork, "record_fork", refused)
    capsys.readouterr()

    assert main(["fork", "trip", "--as", "copy", "--state", str(state)]) == EXIT_OK
    err = capsys.readouterr().err

    assert "neuron-turn: note: `neuron-turn sessions` does not list it" in err
    assert "(the disk is full); it is made all the same" in err
    assert _history(state, "copy", capsys) == _history(state, "trip", capsys)
