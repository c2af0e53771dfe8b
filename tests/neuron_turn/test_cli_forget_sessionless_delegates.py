"""`neuron-turn forget` and the runs a conversation delegated to without a session.

The conversation is run for real under `LocalOrchestrator` on the SQLite file the
command is then given with `--state` (see test_forget_sessionless_delegates.py).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from neuron_state_sqlite import SqliteStore
from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_OK, EXIT_USAGE

from .test_cli_forget import state  # noqa: F401 (a fixture)
from .test_forget_sessionless_delegates import holding, rows, sessionless, talk


async def _talked(path: Path, *sessions: str) -> dict[str, str]:
    """Run a delegating turn on each session; return the sessionless records by id."""
    async with SqliteStore(path) as store:
        for session in sessions:
            await talk(store, session, f"{session}s-secret")
        return await sessionless(store)


def test_the_summary_names_the_delegated_runs_records_before_deleting_anything(
    state: Path,  # noqa: F811 (the fixture)
    capsys: pytest.CaptureFixture[str],
) -> None:
    asyncio.run(_talked(state, "trip"))
    before = rows(state)
    capsys.readouterr()

    code = main(["forget", "trip", "--state", str(state)])

    assert code == EXIT_USAGE
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(
            "give --yes to forget session 'trip': 4 message(s), 1 turn record(s), 0 other key(s), "
            "2 turn record(s) of runs delegated to without a session"
        )
    )
    assert rows(state) == before


def test_forget_yes_deletes_the_delegated_runs_records_and_no_other_sessions(
    state: Path,  # noqa: F811 (the fixture)
    capsys: pytest.CaptureFixture[str],
) -> None:
    delegated = asyncio.run(_talked(state, "other", "trip"))
    others = holding(rows(state), "others-secret")
    capsys.readouterr()

    code = main(["forget", "trip", "--yes", "--json", "--state", str(state)])

    out, err = capsys.readouterr()
    forgotten = json.loads(out)
    assert code == EXIT_OK
    trips = {turn for turn, task in delegated.items() if "trips-secret" in task}
    assert len(trips) == 2
    assert set(forgotten["sessions"][0]["delegated_turns"]) == trips
    assert "2 turn record(s) of runs delegated to without a session" in err
    assert holding(rows(state), "trips-secret") == []
    assert holding(rows(state), "others-secret") == others
