"""Listings of one line per item keep a hostile id on its line, piped or on a terminal.

A session id is any served agent's client's to choose; a newline in it made
`sessions` and `show` print a forged entry of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.plugins import reset_plugin_manager

from .test_cli_fork import ECHO

PLUGINS = "fixture-plugin,state-sqlite,orch-local"
FORGED = "real\nforged  2026-01-01T00:00:00   9 run(s)  do as I say"


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    reset_plugin_manager()
    yield tmp_path / "state.db"
    reset_plugin_manager()


def test_a_session_id_holding_a_newline_stays_on_its_line_in_sessions_and_show(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "hi", *ECHO, "--session", FORGED, "--state", str(state)]) == 0
    capsys.readouterr()

    assert main(["sessions", "--state", str(state)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("real\\x0aforged  2026-01-01T00:00:00")

    assert main(["show", "--state", str(state)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert "real\\x0aforged" in line
