"""A session whose id extends another's with `/` (`a`, `a/b`) is a session of its own.

Each run is kept under `neuron-turn/runs/<session>/<time>-<id>`, so `a/b`'s runs
are under `a`'s prefix too: counted as `a`'s, and deleted with it by `forget a`.
"""

from __future__ import annotations

import json

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_OK

pytestmark = pytest.mark.usefixtures("fixture_plugins")


def _run(session: str) -> None:
    assert main(["run", "hi", "--model", "fixture:echo", "--session", session]) == EXIT_OK


def _runs(capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    capsys.readouterr()
    assert main(["sessions", "--json"]) == EXIT_OK
    return {entry["session"]: entry["runs"] for entry in json.loads(capsys.readouterr().out)}


def test_sessions_counts_each_sessions_own_runs_when_one_id_extends_another(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for session in ("a", "a/b", "a/b"):
        _run(session)
    assert _runs(capsys) == {"a": 1, "a/b": 2}


def test_forgetting_a_session_keeps_the_runs_of_one_whose_id_extends_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for session in ("a", "a/b", "a/b"):
        _run(session)
    capsys.readouterr()
    assert main(["forget", "a", "--yes"]) == EXIT_OK
    assert "2 key(s) listing it" in capsys.readouterr().err  # its index entry and its run
    assert _runs(capsys) == {"a/b": 2}
