"""`neuron-turn run`, against the fixture plugin's scripted provider (no network)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from layer0 import TurnOutput
from neuron_turn import cli
from neuron_turn.cli import main
from neuron_turn.cli.progress import ProgressHook
from neuron_turn.loop.turn import NeuronTurn
from neuron_turn.plugins import reset_plugin_manager

PLUGINS = "fixture-plugin,state-sqlite,orch-local"

SUMMARY = re.compile(
    r"(?P<reason>[^,]+), (?P<turns>\d+) turns?, (?P<tin>\d+) tokens in / (?P<tout>\d+) out, "
    r"\$(?P<cost>\d+\.\d{4}), (?P<seconds>\d+\.\d)s"
)


@pytest.fixture(autouse=True)
def only_the_fixture_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    # The fixture provider, and the store and orchestrator `run` dispatches through.
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    monkeypatch.delenv("NEURON_STRICT_PLUGINS", raising=False)
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def summary_of(err: str) -> dict[str, str]:
    for line in err.splitlines():
        match = SUMMARY.fullmatch(line)
        if match:
            return match.groupdict()
    raise AssertionError(f"no summary line in: {err}")


def test_run_prints_the_answer_then_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hello there", "--model", "fixture:echo"]) == 0
    out, err = capsys.readouterr()
    assert out == "echo: hello there\n"
    # stderr is not a terminal here, so no progress: the summary and the session hint.
    _, hint = err.splitlines()
    assert re.fullmatch(r"session (\w+) \(continue with --session \1\)", hint), hint
    summary = summary_of(err)
    assert summary["reason"] == "complete"
    assert (summary["turns"], summary["tin"], summary["tout"]) == ("1", "12", "3")
    assert summary["cost"] == "0.0006"


def test_run_json_prints_only_the_turn_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hi", "--model", "fixture:echo", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    output = TurnOutput.model_validate_json(out)
    assert output.message.as_text() == "echo: hi"
    assert output.exit_reason == "complete"
    assert output.metadata.turns_used == 1


def test_verbose_shows_each_model_and_tool_call(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "add 2 and 3", "--model", "fixture:tool", "--tool", "fixture_add", "--verbose"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out == "the sum is 5\n"
    lines = err.splitlines()
    assert [line.split(" ")[0] for line in lines[:-2]] == [
        "[model]",
        "[model]",
        "[tool]",
        "[tool]",
        "[model]",
        "[model]",
    ]
    assert lines[0].startswith("[model] call 1 (")
    assert lines[1].startswith("[model] answered: calls fixture_add (")
    assert lines[2] == '[tool] fixture_add({"a": 2, "b": 3})'
    assert lines[3].startswith("[tool] fixture_add -> 5 (")
    assert lines[4].startswith("[model] call 2 (")
    assert lines[5].startswith("[model] answered: the sum is 5 (")
    assert summary_of(err)["turns"] == "2"


def test_progress_is_an_observer_hook_on_the_turn(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[NeuronTurn] = []
    original = NeuronTurn.from_plugins

    def spy(**kwargs: Any) -> NeuronTurn:
        turn = original(**kwargs)
        built.append(turn)
        return turn

    monkeypatch.setattr(NeuronTurn, "from_plugins", spy)
    assert main(["run", "hi", "--model", "fixture:echo", "--verbose"]) == 0
    (turn,) = built
    (progress,) = [entry for entry in turn.hooks if isinstance(entry.hook, ProgressHook)]
    assert progress.observer
    assert progress.name == "neuron-turn.progress"
    # The fixture plugin's own hook came from plugins, before it.
    assert turn.hooks.names() == ("fixture-plugin.fixture_observer", "neuron-turn.progress")


def test_run_passes_limits_to_the_turn(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "add", "--model", "fixture:tool", "--tool", "fixture_add"]
    assert main([*argv, "--max-turns", "1"]) == 0
    assert summary_of(capsys.readouterr().err)["reason"] == "max_turns"
    assert main([*argv, "--max-cost", "0.0001"]) == 0
    assert summary_of(capsys.readouterr().err)["reason"] == "budget_exhausted"


def test_config_converts_units() -> None:
    limits = ["--max-cost", "0.05", "--max-duration", "1.5", "--max-turns", "3"]
    tools = ["--allow-tool", "a", "--allow-tool", "b"]
    args = cli._parser().parse_args(["run", "x", "--model", "p:m", *limits, *tools])
    config = cli._config(args)
    assert (config.max_turns, config.max_duration, config.allowed_tools) == (3, 1500, ["a", "b"])
    assert config.max_cost is not None and str(config.max_cost.amount) == "0.05"
    unset = cli._config(cli._parser().parse_args(["run", "x", "--model", "p:m"]))
    assert (unset.max_turns, unset.max_cost, unset.max_duration, unset.allowed_tools) == (
        None,
        None,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("model", "extra", "code", "expected"),
    [
        ("fixture:auth-error", [], 5, "authentication failed for provider 'fixture'"),
        ("fixture:no-key", [], 5, "FIXTURE_API_KEY is not set"),
        ("fixture:rate-limit", [], 6, "the provider failed (slow down); try again in 7s"),
        ("fixture:bad-request", [], 7, "the provider rejected the request"),
        ("fixture:truncated", [], 8, "the model's answer could not be used"),
        ("nope:model", [], 4, "unknown provider 'nope'; available: fixture"),
        ("fixture", [], 4, "is not '<provider>:<model>', e.g. 'anthropic:claude-haiku-4-5'"),
        ("fixture:echo", ["--tool", "fixture_sub"], 3, "unknown tool 'fixture_sub'"),
    ],
)
def test_errors_end_with_one_line_and_their_own_exit_code(
    capsys: pytest.CaptureFixture[str], model: str, extra: list[str], code: int, expected: str
) -> None:
    assert main(["run", "hi", "--model", model, *extra]) == code
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith("neuron-turn: error: ")
    assert expected in err


def test_a_missing_key_says_what_to_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hi", "--model", "fixture:no-key"]) == 5
    assert capsys.readouterr().err == (
        "neuron-turn: error: authentication failed for provider 'fixture' "
        "(FIXTURE_API_KEY is not set); set its API key (e.g. FIXTURE_API_KEY) and try again\n"
    )


def test_the_installed_command_runs_a_turn_and_fails_cleanly() -> None:
    command = str(Path(sys.executable).parent / "neuron-turn")
    env = {**os.environ, "NEURON_LOAD_PLUGINS": PLUGINS}
    ok = subprocess.run(
        [command, "run", "ping", "--model", "fixture:echo"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert (ok.returncode, ok.stdout) == (0, "echo: ping\n"), ok.stderr
    assert summary_of(ok.stderr)["reason"] == "complete"
    failed = subprocess.run(
        [sys.executable, "-m", "neuron_turn", "run", "ping", "--model", "fixture:auth-error"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert failed.returncode == 5
    assert "Traceback" not in failed.stderr
    assert failed.stderr.count("\n") == 1


def test_mcp_servers_add_their_tools_to_the_turn(capsys: pytest.CaptureFixture[str]) -> None:
    server = f"{sys.executable} -m mcp_server_time --local-timezone UTC"
    argv = ["run", "which tools?", "--model", "fixture:list-tools", "--mcp", server]
    assert main([*argv, "--allow-tool", "get_current_time", "--allow-tool", "convert_time"]) == 0
    assert capsys.readouterr().out == "tools: get_current_time, convert_time\n"


def test_an_mcp_server_that_does_not_start_is_one_clear_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "hi", "--model", "fixture:echo", "--mcp", "/nonexistent/mcp-server --x"]
    assert main(argv) == 9
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/nonexistent/mcp-server" in err


# --- typed answers and tool choice ----------------------------------------------

ANSWER_SCHEMA = (
    '{"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}'
)


def schema_file(tmp_path: Path, text: str = ANSWER_SCHEMA) -> str:
    path = tmp_path / "answer.schema.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_output_schema_prints_the_validated_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The echo model repeats the prompt; the answer is read out of its prose.
    argv = ["run", '{"answer": 391}', "--model", "fixture:echo"]
    assert main([*argv, "--output-schema", schema_file(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out == '{"answer": 391}\n'
    assert summary_of(err)["reason"] == "complete"


def test_an_answer_that_never_validates_exits_as_an_unusable_answer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["run", "hello", "--model", "fixture:echo", "--output-schema", schema_file(tmp_path)]
    assert main(argv) == 8
    out, err = capsys.readouterr()
    assert out == ""
    assert summary_of(err)["reason"] == "custom (output_invalid)"
    assert summary_of(err)["turns"] == "3"  # the answer and two corrections
    assert err.splitlines()[-1] == (
        "neuron-turn: error: the turn ended without an answer matching --output-schema "
        "(exit reason: custom (output_invalid))"
    )


def test_output_schema_json_mode_prints_the_turn_output_with_the_result(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from neuron_turn import output_value

    argv = ["run", '{"answer": 7}', "--model", "fixture:echo", "--json"]
    assert main([*argv, "--output-schema", schema_file(tmp_path)]) == 0
    output = TurnOutput.model_validate_json(capsys.readouterr().out)
    assert output_value(output) == {"answer": 7}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "is not JSON"),
        ("[1, 2]", "holds no JSON Schema object"),
        ('{"type": "integr"}', "not a valid JSON Schema"),
    ],
)
def test_a_bad_output_schema_file_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str | None, message: str
) -> None:
    path = str(tmp_path / "missing.json") if content is None else schema_file(tmp_path, content)
    with pytest.raises(SystemExit) as exited:
        main(["run", "hi", "--model", "fixture:echo", "--output-schema", path])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("choice", ["none", "required", "fixture_add"])
def test_tool_choice_reaches_the_provider(capsys: pytest.CaptureFixture[str], choice: str) -> None:
    argv = ["run", "hi", "--model", "fixture:choice", "--tool", "fixture_add"]
    assert main([*argv, "--tool-choice", choice]) == 0
    assert capsys.readouterr().out == f"tool_choice: {choice}\n"


def test_a_tool_choice_naming_no_offered_tool_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "hi", "--model", "fixture:choice", "--tool-choice", "search"]
    assert main(argv) == 7
    assert "tool_choice names 'search', which this turn does not offer" in capsys.readouterr().err
