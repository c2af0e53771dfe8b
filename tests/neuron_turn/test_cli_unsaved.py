"""A turn whose writes the state refuses: kept in a file, shown where, restored by `restore`.

Turns run for real with `run` (the fixture provider, the local orchestrator) on
a SQLite state file whose writes are refused while `Refusing.on` (as a full
disk refuses them); the orchestrator's retries do not wait (its clock's sleep
returns at once).
"""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from layer0 import HISTORY_KEY, SessionScope, WriteFailed
from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_NOT_FOUND, EXIT_OK, EXIT_STATE, EXIT_UNSAVED, EXIT_USAGE
from neuron_turn.plugins import reset_plugin_manager

from .test_cli_fork import ECHO

PLUGINS = "fixture-plugin,state-sqlite,orch-local"


class Refusing:
    """Makes every SQLite store refuse its batches of writes while `on`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from neuron_orch_local.retry import SystemClock
        from neuron_state_sqlite import SqliteStore

        self.on = True
        self.asked = 0
        for name in ("apply", "apply_recorded"):
            monkeypatch.setattr(SqliteStore, name, self._refusing(getattr(SqliteStore, name)))

        async def at_once(clock: SystemClock, seconds: float) -> None:
            pass

        monkeypatch.setattr(SystemClock, "sleep", at_once)

    def _refusing(self, original: Any) -> Any:
        async def refusing(store: Any, *args: Any) -> Any:
            if self.on:
                self.asked += 1
                raise WriteFailed("database or disk is full")
            return await original(store, *args)

        return refusing


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The state file the commands are given; unsaved exchanges go to `tmp_path/unsaved`."""
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_UNSAVED_DIR", str(tmp_path / "unsaved"))
    reset_plugin_manager()
    yield tmp_path / "state.db"
    reset_plugin_manager()


def _history(state: Path, session: str) -> Any:
    from neuron_state_sqlite import SqliteStore

    async def read() -> Any:
        async with SqliteStore(state) as store:
            return await store.read(SessionScope(id=session), HISTORY_KEY)

    return asyncio.run(read())


def _kept_file(err: str) -> Path:
    (line,) = [line for line in err.splitlines() if "neuron-turn restore" in line]
    return Path(line.split("`neuron-turn restore ")[1].split("`")[0])


def test_a_refused_turn_shows_its_answer_keeps_it_in_a_file_and_restore_writes_it_once(
    state: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    refusing = Refusing(monkeypatch)
    argv = ["run", "hello there", *ECHO, "--session", "trip", "--state", str(state)]

    assert main(argv) == EXIT_UNSAVED

    out, err = capsys.readouterr()
    assert "hello there" in out  # the answer was shown as it came
    assert "database or disk is full" in err and "asked 3 times" in err
    kept = _kept_file(err)
    assert kept.parent == state.parent / "unsaved" and refusing.asked == 3
    assert _history(state, "trip") is None
    copy = state.parent / "copy.json"
    shutil.copy(kept, copy)

    refusing.on = False
    assert main(["restore", str(kept), "--state", str(state)]) == EXIT_OK
    assert main(["restore", str(copy), "--state", str(state)]) == EXIT_OK  # twice: one copy

    history = _history(state, "trip")
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert "hello there" in json.dumps(history)
    assert not kept.exists() and not copy.exists()
    assert "restored" in capsys.readouterr().err


def test_a_chat_answer_the_state_refuses_is_kept_in_a_file_and_the_chat_goes_on(
    state: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    refusing = Refusing(monkeypatch)
    monkeypatch.setattr("sys.stdin", io.StringIO("first\nsecond\n"))

    main(["chat", *ECHO, "--session", "trip", "--state", str(state)])

    err = capsys.readouterr().err
    kept = [line for line in err.splitlines() if "neuron-turn restore" in line]
    assert len(kept) == 2 and refusing.asked == 6  # each answer's, three times each
    refusing.on = False
    for line in kept:
        path = Path(line.split("`neuron-turn restore ")[1].split("`")[0])
        assert main(["restore", str(path), "--state", str(state)]) == EXIT_OK
    history = _history(state, "trip")
    assert [m["content"] for m in history if m["role"] == "user"] == ["first", "second"]


def test_with_json_the_refused_turns_answer_is_printed_as_a_kept_one_is(
    state: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Refusing(monkeypatch)
    argv = ["run", "hello there", *ECHO, "--session", "trip", "--state", str(state), "--json"]

    assert main(argv) == EXIT_UNSAVED

    out, err = capsys.readouterr()
    printed = json.loads(out)
    assert printed["session"] == "trip" and "hello there" in json.dumps(printed)
    assert _kept_file(err).exists()


def test_a_file_the_state_refuses_again_is_kept_and_nothing_of_it_written(
    state: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Refusing(monkeypatch)
    main(["run", "hi", *ECHO, "--session", "trip", "--state", str(state)])
    kept = _kept_file(capsys.readouterr().err)

    assert main(["restore", str(kept), "--state", str(state)]) == EXIT_STATE

    assert kept.exists() and "the file is kept" in capsys.readouterr().err
    assert _history(state, "trip") is None


def test_when_even_the_file_cannot_be_written_the_writes_are_printed_whole(
    state: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Refusing(monkeypatch)
    blocked = state.parent / "not-a-directory"
    blocked.write_text("a file where the directory would go")
    monkeypatch.setenv("NEURON_UNSAVED_DIR", str(blocked / "unsaved"))

    assert main(["run", "hi", *ECHO, "--session", "trip", "--state", str(state)]) == EXIT_STATE

    err = capsys.readouterr().err
    printed = json.loads(err[err.index("{") :])
    assert printed["format"] == "neuron-turn unsaved exchange"
    (append,) = [e for e in printed["effects"] if e.get("effect_type") == "append_history"]
    assert append["data"]["session"] == "trip"


@pytest.mark.parametrize(
    ("content", "says", "code"),
    [
        ("not json", "not JSON", EXIT_USAGE),
        ('{"format": "something else"}', "not an unsaved exchange", EXIT_USAGE),
        (
            '{"format": "neuron-turn unsaved exchange", "version": 9, "effects": []}',
            "version 9",
            EXIT_USAGE,
        ),
        (
            '{"format": "neuron-turn unsaved exchange", "version": 1, '
            '"effects": [{"type": "log", "level": "info", "message": "x"}]}',
            "no state write",
            EXIT_USAGE,
        ),
        (b"\xff\xfe not text", "not UTF-8 text", EXIT_USAGE),
        ("directory", "not a regular file", EXIT_USAGE),
        (None, "no such file", EXIT_NOT_FOUND),
    ],
)
def test_a_file_that_is_no_unsaved_exchange_is_refused_naming_why_writing_nothing(
    state: Path,
    capsys: pytest.CaptureFixture[str],
    content: str | bytes | None,
    says: str,
    code: int,
) -> None:
    path = state.parent / "given.json"
    if content == "directory":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)

    assert main(["restore", str(path), "--state", str(state)]) == code

    err = capsys.readouterr().err
    assert says in err and "nothing was restored" in err
    assert not state.exists()
