"""How `run` reports a turn's end: `--json`'s top-level facts, and turns that did not complete."""

from __future__ import annotations

import json

import pytest

from layer0 import CustomExit, ExitReason, ObserverHalt, TurnMetadata, TurnOutput, usd
from neuron_turn.cli import main
from neuron_turn.cli._outcome import stop_note

TOOL_RUN = ["run", "add 2 and 3", "--model", "fixture:tool", "--tool", "fixture_add"]


pytestmark = pytest.mark.usefixtures("fixture_plugins")


def test_json_puts_the_session_and_turn_id_at_the_top(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hi", "--model", "fixture:echo", "--json", "--session", "s1"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert list(result)[:2] == ["session", "turn_id"]
    assert result["session"] == "s1"
    appended = result["effects"][-1]["data"]
    assert result["turn_id"] == appended["turn_id"] and len(result["turn_id"]) >= 8
    # Still a TurnOutput to anything that reads one.
    assert TurnOutput.model_validate(result).message.as_text() == "echo: hi"


def test_json_names_a_new_session_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hi", "--model", "fixture:echo", "--json"]) == 0
    session = json.loads(capsys.readouterr().out)["session"]
    assert main(["history", session, "--json"]) == 0
    assert "echo: hi" in capsys.readouterr().out


def test_max_turns_reached_says_what_stopped_and_prints_no_empty_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*TOOL_RUN, "--max-turns", "1", "--session", "s2"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1] == (
        "neuron-turn: the turn stopped at its limit of 1 model call (--max-turns) before it "
        "completed; raise --max-turns, or continue with: neuron-turn run PROMPT --session s2"
    )


def test_a_cost_limit_reached_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*TOOL_RUN, "--max-cost", "0.0001", "--session", "s3"]) == 0
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("neuron-turn: the turn stopped at its cost limit (--max-cost; $0.0006")
    assert last.endswith("raise --max-cost, or continue with: neuron-turn run PROMPT --session s3")


def test_a_tool_call_limit_reached_says_which_limit_and_runs_no_tool(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*TOOL_RUN, "--max-tool-calls", "0", "--session", "s4"]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == (
        "neuron-turn: Stopped at the turn's limit of 0 tool calls: the model asked for 1 in "
        "all, none of its last calls ran (--max-tool-calls); raise --max-tool-calls, or "
        "continue with: neuron-turn run PROMPT --session s4"
    )
    assert main(["history", "s4", "--json"]) == 0
    assert "Not run: Stopped at the turn's limit of 0 tool calls" in capsys.readouterr().out


def test_a_token_limit_reached_says_which_limit_and_how_many_were_used(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*TOOL_RUN, "--max-output-tokens", "2", "--session", "s5"]) == 0
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("neuron-turn: Stopped at the turn's limit of 2 output tokens (")
    assert last.endswith(
        "used) (--max-output-tokens); raise --max-output-tokens, or continue with: "
        "neuron-turn run PROMPT --session s5"
    )


def test_a_completed_turn_adds_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(TOOL_RUN) == 0
    assert "stopped" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("timeout", "the turn stopped at its time limit (--max-duration); raise --max-duration"),
        ("circuit_breaker", "the turn stopped after too many failed tool calls in a row"),
        ("error", "the turn ended with an error; `neuron-turn history s` shows"),
        (ObserverHalt(reason="policy"), "a hook halted the turn: policy; continue with"),
        (CustomExit(name="stuck_detected"), "the turn stopped before it completed (stuck_"),
    ],
)
def test_every_other_exit_reason_has_its_note(reason: ExitReason, expected: str) -> None:
    metadata = TurnMetadata(
        tokens_in=0, tokens_out=0, cost=usd("0"), turns_used=1, tools_called=[], duration=1
    )
    output = TurnOutput(message="", exit_reason=reason, metadata=metadata)
    note = stop_note(output, "s")
    assert note is not None and note.startswith(expected), note


def test_a_tool_offered_and_not_allowed_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*TOOL_RUN, "--allow-tool", "clock"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "neuron-turn: error: --tool fixture_add is offered but not allowed (--allow-tool clock); "
        "add --allow-tool fixture_add, or drop --tool fixture_add\n"
    )


def test_allowed_tools_that_cover_every_offered_tool_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*TOOL_RUN, "--allow-tool", "fixture_add", "--allow-tool", "write_memory"]) == 0
    assert capsys.readouterr().out == "the sum is 5\n"


def test_a_stop_tools_result_is_the_runs_answer_with_no_model_call_after_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*TOOL_RUN, "--stop-at-tool", "fixture_add"]) == 0
    out, err = capsys.readouterr()
    assert out == "5\n"
    assert err.startswith("complete, 1 turn,")


def test_a_stop_tool_the_run_does_not_have_is_a_usage_error_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*TOOL_RUN, "--stop-at-tool", "fixture_sub"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "neuron-turn: error: --stop-at-tool: TurnInput.metadata['neuron_turn']['stop_at_tools'] "
        "names stop tools this turn does not have: fixture_sub; its tools: fixture_add, and "
        "the effect and memory tools"
    )
