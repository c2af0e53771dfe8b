"""`neuron-turn revoke`: a person takes back the decisions given for good in a session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from layer0 import SessionScope
from neuron_state_sqlite import SqliteStore
from neuron_turn import STANDING_KEY, StandingDecision
from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_AWAITING_APPROVAL, EXIT_NOT_FOUND, EXIT_OK
from neuron_turn.loop.standing import standing_effect
from neuron_turn.plugins import reset_plugin_manager

HELD = ["--model", "fixture:big-sum", "--tool", "fixture_add"]


@pytest.fixture(autouse=True)
def plugins_and_state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", "fixture-plugin,state-sqlite,orch-local")
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def stored(tmp_path: Path, session: str) -> object:
    async def read() -> object:
        async with SqliteStore(tmp_path / "state.db") as store:
            return await store.read(SessionScope(id=session), STANDING_KEY)

    return asyncio.run(read())


def test_revoke_takes_back_the_sessions_decisions_for_good(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["run", "add", *HELD, "--session", "w"]) == EXIT_AWAITING_APPROVAL
    assert main(["resume", "w", "--approve", "call_1", "--always", *HELD]) == EXIT_OK
    capsys.readouterr()

    assert main(["revoke", "w"]) == EXIT_OK
    said = capsys.readouterr().err
    assert main(["sessions", "--json"]) == EXIT_OK
    [entry] = json.loads(capsys.readouterr().out)

    assert "took back the decisions for good for fixture_add in session 'w'" in said
    assert entry["standing"] == {}
    assert stored(tmp_path, "w") is None


def test_revoke_of_named_tools_keeps_the_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    approve, deny = StandingDecision(decision="approve"), StandingDecision(decision="deny")

    async def given() -> None:
        effect = standing_effect("s1", {"shell": approve, "rm": deny, "ls": approve})
        async with SqliteStore(tmp_path / "state.db") as store:
            await store.write(effect.scope, effect.key, effect.value)

    asyncio.run(given())

    assert main(["revoke", "s1", "shell", "rm"]) == EXIT_OK
    assert stored(tmp_path, "s1") == {"ls": {"decision": "approve", "reason": ""}}


def test_revoke_of_a_tool_without_a_decision_for_good_changes_nothing_and_names_those_there(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["run", "add", *HELD, "--session", "w"]) == EXIT_AWAITING_APPROVAL
    assert main(["resume", "w", "--approve", "call_1", "--always", *HELD]) == EXIT_OK
    capsys.readouterr()

    assert main(["revoke", "w", "fixture_add", "shell"]) == EXIT_NOT_FOUND
    said = capsys.readouterr().err

    assert said.strip() == (
        "neuron-turn: error: no decision for good for shell in session 'w' "
        "(it has: fixture_add); `neuron-turn sessions` lists them"
    )
    assert stored(tmp_path, "w") == {"fixture_add": {"decision": "approve", "reason": ""}}


def test_revoke_in_a_session_without_decisions_for_good_says_there_is_nothing_to_take_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["revoke", "never-used"]) == EXIT_OK
    assert "session 'never-used' has no decisions given for good" in capsys.readouterr().err
