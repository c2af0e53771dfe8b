"""A state file the command line cannot use: its own exit code, one line, no retry advice."""

from __future__ import annotations

import asyncio
import ctypes
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from layer0 import SessionScope
from neuron_state_sqlite import SqliteStore
from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_STATE
from neuron_turn.plugins import reset_plugin_manager

PLUGINS = "fixture-plugin,state-sqlite,orch-local"
_PR_CAPBSET_DROP = 24
_DAC_CAPABILITIES = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


@pytest.fixture(autouse=True)
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def spoil_history(state_file: Path, session: str) -> None:
    """Store what no history is as `session`'s, in SQLite `state_file`, as another program might."""

    async def spoil() -> None:
        async with SqliteStore(state_file) as store:
            await store.write(SessionScope(id=session), "messages", [{"role": "wizard"}])

    asyncio.run(spoil())


def _random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(4096))


def _another_programs_database(path: Path) -> None:
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
        connection.commit()


def _a_directory(path: Path) -> None:
    path.mkdir()


BAD_FILES = [_random_bytes, _another_programs_database, _a_directory]


@pytest.mark.parametrize("command", [["run", "hi", "--model", "fixture:echo"], ["sessions"]])
@pytest.mark.parametrize("make", BAD_FILES)
def test_a_bad_state_file_exits_with_the_state_code_naming_the_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], None],
    command: list[str],
) -> None:
    path = tmp_path / "state.db"
    make(path)
    code = main([*command, "--state", str(path)])
    err = capsys.readouterr().err
    assert code == EXIT_STATE
    assert len(err.splitlines()) == 1 and str(path) in err
    assert "try again" not in err
    assert "--state" in err


def test_the_state_exit_code_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert f"  {EXIT_STATE:<4} the state file could not be used" in capsys.readouterr().out


def _without_file_permission_override() -> None:
    """In the child, before exec: lose root's power to ignore file modes, if we are root."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in _DAC_CAPABILITIES:
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = os.environ | {"NEURON_LOAD_PLUGINS": PLUGINS}
    return subprocess.run(
        [sys.executable, "-m", "neuron_turn", *argv],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_without_file_permission_override,
        check=False,
    )


@pytest.fixture
def read_only_state(tmp_path: Path) -> Iterator[Path]:
    """A state file holding session 'chat', read-only, in a read-only directory."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "state.db"
    assert _cli("run", "hello there", "--model", "fixture:echo", "--session", "chat",
                "--state", str(path), cwd=tmp_path).returncode == 0  # fmt: skip
    path.chmod(0o444)
    folder.chmod(0o555)
    yield path
    folder.chmod(0o755)


def test_sessions_and_history_read_a_read_only_state_file(
    read_only_state: Path, tmp_path: Path
) -> None:
    before = read_only_state.read_bytes()
    sessions = _cli("sessions", "--state", str(read_only_state), cwd=tmp_path)
    assert (sessions.returncode, sessions.stderr) == (0, "")
    assert "chat" in sessions.stdout and "hello there" in sessions.stdout
    history = _cli("history", "chat", "--state", str(read_only_state), cwd=tmp_path)
    assert (history.returncode, history.stderr) == (0, "")
    assert history.stdout.splitlines() == [
        "user (turn 1): hello there",
        "assistant: echo: hello there",
    ]
    assert read_only_state.read_bytes() == before
    assert sorted(p.name for p in read_only_state.parent.iterdir()) == ["state.db"]


def test_show_reads_the_turns_of_a_read_only_state_file(
    read_only_state: Path, tmp_path: Path
) -> None:
    before = read_only_state.read_bytes()
    listing = _cli("show", "--session", "chat", "--state", str(read_only_state), cwd=tmp_path)
    assert (listing.returncode, listing.stderr) == (0, "")
    turn = listing.stdout.split()[0]
    shown = _cli("show", turn, "--state", str(read_only_state), cwd=tmp_path)
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.startswith(f"turn {turn}\n") and "answer: echo: hello there" in shown.stdout
    assert read_only_state.read_bytes() == before
    assert sorted(p.name for p in read_only_state.parent.iterdir()) == ["state.db"]


def test_run_on_a_read_only_state_file_says_so_with_the_state_code(
    read_only_state: Path, tmp_path: Path
) -> None:
    result = _cli("run", "more", "--model", "fixture:echo", "--session", "chat",
                  "--state", str(read_only_state), cwd=tmp_path)  # fmt: skip
    assert result.returncode == EXIT_STATE
    [line] = result.stderr.splitlines()
    assert str(read_only_state) in line and "read-only" in line
    assert "try again" not in line
