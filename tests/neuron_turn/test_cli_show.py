"""`neuron-turn show`: a run's turn record, and the turns of a session, from the state file."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from layer0 import TurnRecord
from neuron_turn.cli import main
from neuron_turn.plugins import reset_plugin_manager

PLUGINS = "fixture-plugin,state-sqlite,orch-local"


@pytest.fixture(autouse=True)
def plugins_and_state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def run_tool_turn(capsys: pytest.CaptureFixture[str], session: str = "demo") -> str:
    """Run the fixture's tool turn with --verbose; return the turn id it printed."""
    argv = ["run", "add 2 and 3", "--model", "fixture:tool", "--tool", "fixture_add"]
    assert main([*argv, "--session", session, "--verbose"]) == 0
    lines = capsys.readouterr().err.splitlines()
    found = [re.fullmatch(r"turn (\w+) \(neuron-turn show (\w+)\)", line) for line in lines]
    ids = [m.group(1) for m in found if m is not None and m.group(1) == m.group(2)]
    assert len(ids) == 1, lines
    assert lines[-1].startswith(f"session {session} ")  # the continue hint stays last
    return ids[0]


def test_a_verbose_run_prints_its_turn_id_and_show_prints_the_calls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    turn = run_tool_turn(capsys)
    assert main(["show", turn]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"turn {turn}\n")
    assert "session demo  agent main" in out
    assert "complete, 2 model call(s), 22 tokens in / 8 out, $0.0012" in out
    assert re.search(r"model tool \(tool_use\)  10 in / 5 out  \$0\.0006", out)
    assert re.search(r'tool fixture_add\(\{"a":2,"b":3\}\) -> 5', out)
    assert "answer: the sum is 5" in out


def test_show_json_prints_the_record_and_json_runs_carry_the_turn_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "add 2 and 3", "--model", "fixture:tool", "--tool", "fixture_add", "--json"]
    assert main(argv) == 0
    turn = json.loads(capsys.readouterr().out)["turn_id"]
    assert main(["show", turn, "--json"]) == 0
    record = TurnRecord.model_validate_json(capsys.readouterr().out)
    assert record.turn_id == turn and record.status == "executed"
    assert [entry.kind for entry in record.timeline] == ["model_call", "tool_call", "model_call"]


def test_show_lists_turns_newest_first_and_those_of_one_session(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = run_tool_turn(capsys, "a")
    second = run_tool_turn(capsys, "b")
    third = run_tool_turn(capsys, "a")
    assert main(["show"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [third, second, first]
    assert main(["show", "--session", "a", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(t["turn_id"], t["session"], t["title"]) for t in listed] == [
        (third, "a", "add 2 and 3"),
        (first, "a", "add 2 and 3"),
    ]


def test_an_unknown_turn_or_session_exits_14_and_a_turn_with_a_session_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_tool_turn(capsys)
    assert main(["show", "nope"]) == 14
    assert "no turn 'nope' is recorded" in capsys.readouterr().err
    assert main(["show", "--session", "nope"]) == 14
    assert "no turns recorded for session 'nope'" in capsys.readouterr().err
    assert main(["show", "x", "--session", "demo"]) == 2
