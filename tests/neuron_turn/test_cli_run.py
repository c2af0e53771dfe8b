"""`neuron-turn run`, against the fixture plugin's scripted provider (no network)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from layer0 import TurnOutput
from neuron_turn import cli
from neuron_turn.cli import main
from neuron_turn.plugins import reset_plugin_manager

PLUGINS = "fixture-plugin,state-sqlite,orch-local"

SUMMARY = re.compile(
    r"(?P<reason>[^,]+), (?P<turns>\d+) turns?, (?P<tin>\d+) tokens in / (?P<tout>\d+) out, "
    r"\$(?P<cost>\d+\.\d{4}), (?P<seconds>\d+\.\d)s"
)


pytestmark = pytest.mark.usefixtures("fixture_plugins")


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
    assert lines[:6] == [
        "[model] call 1",
        "[model] call 1: 10 tokens in / 5 out, $0.0006 (tool_use)",
        '[tool] fixture_add({"a": 2, "b": 3})',
        lines[3],
        "[model] call 2",
        "[model] call 2: 12 tokens in / 3 out, $0.0006 (end_turn)",
    ]
    # The tool's own duration, not the time since the turn started.
    assert re.fullmatch(r"\[tool\] fixture_add -> 5 \(\d+\.\d\ds\)", lines[3]), lines[3]
    assert summary_of(err)["turns"] == "2"


def test_the_answer_streams_to_stdout_and_errors_start_on_a_new_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "hi", "--model", "fixture:truncated"]) == 8
    out, err = capsys.readouterr()
    # The text came before the model said it was cut short; the line is ended.
    assert out == "echo: hi\n"
    assert err.startswith("neuron-turn: error: the model's answer could not be used")


def test_jsonl_prints_each_event_as_a_json_line_and_the_output_last(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "add", "--model", "fixture:tool", "--tool", "fixture_add", "--jsonl"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    events = [json.loads(line) for line in out.splitlines()]
    kinds = [event["type"] for event in events]
    assert kinds[0] == "model_call_start"
    assert kinds.count("model_call_done") == 2
    tool = next(event for event in events if event["type"] == "tool_result")
    assert (tool["name"], tool["content"], tool["is_error"]) == ("fixture_add", "5", False)
    texts = "".join(event["text"] for event in events if event["type"] == "text_delta")
    assert texts == "the sum is 5"
    last = events[-1]
    assert last["type"] == "turn_done"
    output = TurnOutput.model_validate(last["output"])
    assert output.message.as_text() == "the sum is 5"


def test_json_and_jsonl_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "hi", "--model", "fixture:echo", "--json", "--jsonl"])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_answer_reaches_stdout_word_by_word_before_the_turn_ends(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    env = {
        **os.environ,
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "state.db"),
        "FIXTURE_GATE": str(gate),
    }
    command = [sys.executable, "-m", "neuron_turn", "run", "go", "--model", "fixture:gated"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as process:
        assert process.stdout is not None
        # The provider is blocked on the gate: the first word can only be here if it
        # was written and flushed as it arrived.
        assert process.stdout.read(len(b"first ")) == b"first "
        gate.write_text("open")
        rest, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert rest == b"second\n"


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
        (
            "fixture:rate-limit",
            ["--retries", "0"],
            6,
            "the provider failed (slow down); try again in 7s",
        ),
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
    assert out == ("echo: hi\n" if model == "fixture:truncated" else "")
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


@pytest.mark.parametrize(("mode", "offered"), [("tool", True), ("prompted", False)])
def test_output_mode_sets_how_the_model_is_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: str, offered: bool
) -> None:
    # This model answers with the names of the tools it was offered.
    argv = ["run", "hi", "--model", "fixture:list-tools", "--output-mode", mode, "--json"]
    main([*argv, "--output-schema", schema_file(tmp_path)])
    output = TurnOutput.model_validate_json(capsys.readouterr().out)
    assert output.message.as_text().endswith(", final_answer") is offered


def choice_files(tmp_path: Path) -> list[str]:
    """Two schema files to choose between: refund.schema.json and escalation.json."""
    refund = tmp_path / "refund.schema.json"
    refund.write_text(
        '{"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}'
    )
    escalation = tmp_path / "escalation.json"
    escalation.write_text(
        '{"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}'
    )
    return ["--output-schema", str(refund), "--output-schema", str(escalation)]


def test_output_schema_twice_is_a_choice_printed_with_its_kind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The echo model repeats the prompt: here the choice's answer, which names its kind.
    said = '{"result": {"kind": "refund", "data": {"amount": 3}}}'
    argv = ["run", said, "--model", "fixture:echo", "--output-mode", "prompted"]
    assert main([*argv, *choice_files(tmp_path)]) == 0
    assert capsys.readouterr().out == '{"kind": "refund", "data": {"amount": 3}}\n'


def test_a_choice_of_schema_files_offers_a_final_answer_tool_per_kind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["run", "hi", "--model", "fixture:list-tools", "--output-mode", "tool", "--json"]
    main([*argv, *choice_files(tmp_path)])
    output = TurnOutput.model_validate_json(capsys.readouterr().out)
    assert output.message.as_text().endswith(", final_answer_refund, final_answer_escalation")


def test_two_schema_files_of_one_kind_are_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "a").mkdir()
    again = tmp_path / "a" / "refund.json"
    again.write_text('{"type": "object"}')
    files = [*choice_files(tmp_path), "--output-schema", str(again)]
    assert main(["run", "hi", "--model", "fixture:echo", *files]) == 2
    assert "two files name the kind 'refund'" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["tool", "prompted"])
def test_output_text_takes_a_plain_answer_as_text_and_json_as_its_schemas_kind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: str
) -> None:
    argv = ["run", "--model", "fixture:echo", "--output-mode", mode, "--output-text"]
    schema = ["--output-schema", schema_file(tmp_path)]

    assert main([*argv, "just words", *schema]) == 0
    spoken = capsys.readouterr().out
    assert main([*argv, '{"answer": 391}', *schema]) == 0
    typed = capsys.readouterr().out

    assert json.loads(spoken) == {"kind": "text", "data": "echo: just words"}
    if mode == "prompted":  # the echo model's JSON is its answer
        assert json.loads(typed) == {"kind": "answer", "data": {"answer": 391}}
    else:  # structured answers come through the final-answer tool, which echo never calls
        assert json.loads(typed) == {"kind": "text", "data": 'echo: {"answer": 391}'}


def test_output_text_with_a_choice_offers_its_tools_without_forcing_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["run", "hi", "--model", "fixture:list-tools", "--output-mode", "tool"]
    assert main([*argv, "--output-text", *choice_files(tmp_path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["kind"] == "text"
    assert shown["data"].endswith(", final_answer_refund, final_answer_escalation")


@pytest.mark.parametrize(
    ("files", "says"),
    [
        (
            {f"{'k' * 60}1.json": '{"type": "object"}', f"{'k' * 60}2.json": '{"type": "object"}'},
            "have the final-answer tool 'final_answer_kkkk",
        ),
        (
            {"one.json": '{"type": "object"}', "many.json": '{"type": "array"}'},
            "object at its root",
        ),
        (
            {
                "a.json": '{"type": "object", "$defs": {"X": {"type": "string"}}}',
                "b.json": '{"type": "object", "$defs": {"X": {"type": "integer"}}}',
            },
            "define 'X' differently",
        ),
    ],
)
def test_schema_files_that_cannot_make_a_choice_are_a_usage_error_before_any_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, files: dict[str, str], says: str
) -> None:
    flags: list[str] = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        flags += ["--output-schema", str(tmp_path / name)]

    assert main(["run", "hi", "--model", "fixture:echo", *flags]) == 2
    err = capsys.readouterr().err
    assert "--output-schema: " in err and says in err


def test_strict_output_over_a_provider_without_strict_mode_is_a_usage_error_before_any_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["run", "hi", "--model", "fixture:echo", "--output-mode", "tool"]
    assert main([*argv, "--strict-output", "on", "--output-schema", schema_file(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith(
        "neuron-turn: error: --strict-output: the provider FixtureProvider has no strict mode"
    )
    assert err[-1].endswith(", or choose a --model whose provider has it")


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--output-mode", "native"], "--output-mode shape"),
        (["--strict-output", "off"], "--strict-output shape"),
        (["--output-mode", "tool", "--strict-output", "on"], "--output-mode and --strict-output"),
        (["--output-text"], "--output-text shape"),
    ],
)
def test_output_mode_or_strictness_without_an_output_schema_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    assert main(["run", "hi", "--model", "fixture:echo", *flags]) == 2
    err = capsys.readouterr().err
    assert named in err and "give --output-schema FILE" in err


@pytest.mark.parametrize(("flag", "value"), [("--output-mode", "json"), ("--strict-output", "yes")])
def test_an_unknown_output_mode_or_strictness_is_refused_by_the_parser(
    capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "hi", "--model", "fixture:echo", flag, value])
    assert exited.value.code == 2
    assert repr(value) in capsys.readouterr().err


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


def test_context_flags_pick_and_configure_a_plugin_strategy(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from neuron_hooks import lifecycle_events

    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS + ",context-strategies")
    reset_plugin_manager()
    flags = ["--context", "tiered", "--context-option", "keep=1", "--context-limit", "5"]
    assert main(["run", "first", "--model", "fixture:echo", "--session", "ctx", *flags]) == 0
    capsys.readouterr()
    argv = ["run", "second", "--model", "fixture:echo", "--session", "ctx", "--json", *flags]
    assert main(argv) == 0
    output = TurnOutput.model_validate_json(capsys.readouterr().out)
    kinds = [event.type for event in lifecycle_events(output.effects)]
    assert "pre_compaction_flush" in kinds
    (complete,) = [e for e in lifecycle_events(output.effects) if e.type == "compaction_complete"]
    assert complete.strategy == "tiered"


def test_an_unknown_context_strategy_names_the_ones_installed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["run", "hi", "--model", "fixture:echo", "--context", "nope"])
    assert code == 3  # a plugin error
    err = capsys.readouterr().err
    assert "unknown context strategy 'nope'" in err
    assert "sliding_window" in err


@pytest.mark.parametrize("option", ["keep", "=5", "two words=1"])
def test_a_context_option_without_key_equals_value_is_a_usage_error(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "hi", "--model", "fixture:echo", "--context-option", option])
    assert exited.value.code == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_a_plugins_input_guardrail_stops_the_run_and_says_which(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "a forbidden word", "--model", "fixture:echo"]) == 0
    out, err = capsys.readouterr()
    said = "Stopped by guardrail 'fixture_no_forbidden' on the message: the message says forbidden"
    assert out == said + "\n"  # the model's answer was held, and never shown
    assert f"neuron-turn: {said} (the session keeps no answer it stopped); continue with" in err
    assert summary_of(err)["reason"] == "custom (guardrail_tripped)"


def test_a_plugins_output_guardrail_withholds_the_answer_from_the_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    argv = ["run", "classified plans", "--model", "fixture:echo", "--session", "g1"]
    assert main(argv) == 0
    _, err = capsys.readouterr()
    assert "guardrail 'fixture_no_classified' on the answer: the answer says classified" in err

    assert main(["history", "g1", "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert "echo: classified" not in json.dumps(history)


def test_a_plugins_output_validator_sends_the_answer_back_in_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    assert main(["run", "a draft", "--model", "fixture:echo", "--session", "v1"]) == 0
    out, err = capsys.readouterr()
    # The echo model answers the validator's hint in its second call.
    assert out.splitlines() == [
        "echo: a draft",
        "echo: Your answer was not accepted: give the final version. Answer again.",
    ]
    assert summary_of(err)["reason"] == "complete"
    assert main(["history", "v1", "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]


def test_temporal_options_given_to_the_local_orchestrator_are_named_as_ignored(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    kept = ["--task-queue", "q", "--payload-dir", str(tmp_path / "payloads")]
    assert main(["run", "hi", "--model", "fixture:echo", *kept]) == 0
    captured = capsys.readouterr()
    assert captured.out == "echo: hi\n"
    assert (
        "neuron-turn: note: --task-queue, --payload-dir apply to --orchestrator temporal; "
        "the local orchestrator runs the turn here and ignores them"
    ) in captured.err.splitlines()
    assert not (tmp_path / "payloads").exists()


def test_output_modes_on_the_command_line_are_the_loops() -> None:
    from typing import get_args

    from neuron_turn import OutputMode
    from neuron_turn.cli import _OUTPUT_MODES as modes

    assert modes == get_args(OutputMode)


def test_a_plugins_tool_source_that_fails_exits_as_a_tool_source_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from neuron_tool import ToolDyn, tool_source
    from neuron_turn import RegisterTool, hookimpl
    from neuron_turn.cli._errors import EXIT_TOOL_SOURCE
    from neuron_turn.plugins import get_plugin_manager

    @tool_source
    def tenant_tools(ctx: object) -> list[ToolDyn]:
        raise LookupError("no tenant in the deps")

    class Plugin:
        @hookimpl
        def register_tools(self, register: RegisterTool) -> None:
            register(tenant_tools)

    get_plugin_manager().register(Plugin(), name="tenant-plugin")

    code = main(["run", "hi", "--model", "fixture:echo", "--tool", "tenant_tools"])

    out, err = capsys.readouterr()
    assert (code, out) == (EXIT_TOOL_SOURCE, "")
    assert err.splitlines()[-1] == (
        "neuron-turn: error: tool source 'tenant_tools' raised LookupError: no tenant in the "
        "deps; check that source: an --mcp or --mcp-url server, or the plugin offering it "
        "as a --tool"
    )


def test_output_type_names_a_plugins_type_and_prints_the_validated_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", '{"answer": 391}', "--model", "fixture:echo", "--output-type", "fixture_sum"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out == '{"answer": 391}\n'
    assert summary_of(err)["reason"] == "complete"


def test_output_type_naming_a_choice_prints_the_kind_answered(
    capsys: pytest.CaptureFixture[str],
) -> None:
    said = '{"result": {"kind": "Escalation", "data": {"reason": "fraud"}}}'
    argv = ["run", said, "--model", "fixture:echo", "--output-type", "fixture_triage"]
    assert main(argv) == 0
    assert capsys.readouterr().out == '{"kind": "Escalation", "data": {"reason": "fraud"}}\n'


def test_output_type_with_output_text_takes_a_plain_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "hello", "--model", "fixture:echo", "--output-type", "fixture_sum"]
    assert main([*argv, "--output-text"]) == 0
    assert capsys.readouterr().out == '{"kind": "text", "data": "echo: hello"}\n'


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--output-type", "fixture_smu"],
            "--output-type: unknown output type 'fixture_smu'; available: fixture_sum, "
            "fixture_triage (did you mean 'fixture_sum'?)",
        ),
        (
            ["--output-type", "fixture_sum", "--output-mode", "tool"],
            "--output-mode cannot shape --output-type fixture_sum: a named output type keeps "
            "the mode and strictness it was registered with",
        ),
        (
            ["--output-type", "fixture_sum", "--output-schema", "SCHEMA"],
            "--output-type and --output-schema both give the answer's type; give one",
        ),
    ],
)
def test_output_type_unknown_or_shaped_is_a_usage_error_before_any_model_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: list[str], message: str
) -> None:
    flags = [schema_file(tmp_path) if flag == "SCHEMA" else flag for flag in flags]
    assert main(["run", "hi", "--model", "fixture:echo", *flags]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err
    assert SUMMARY.search(err) is None  # no turn ran


def test_an_answer_never_of_the_named_type_exits_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "hello", "--model", "fixture:echo", "--output-type", "fixture_sum"]
    assert main(argv) == 8
    assert capsys.readouterr().err.splitlines()[-1] == (
        "neuron-turn: error: the turn ended without an answer matching --output-type "
        "fixture_sum (exit reason: custom (output_invalid))"
    )
