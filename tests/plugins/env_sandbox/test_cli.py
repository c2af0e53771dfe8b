"""`neuron-turn run --environment`: the turn runs in the child or the sandbox, its effects here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_AWAITING_APPROVAL, EXIT_ENVIRONMENT
from neuron_turn.plugins import reset_plugin_manager

PLUGINS = "fixture-plugin,state-sqlite,orch-local,env-sandbox,tools-basic"


@pytest.fixture(autouse=True)
def plugins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def test_run_in_the_sandbox_answers_and_keeps_the_session(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "hello there", "--model", "fixture:echo", "--environment", "sandbox"]
    assert main([*args, "--session", "s1"]) == 0
    assert capsys.readouterr().out == "echo: hello there\n"
    assert main(["history", "s1"]) == 0
    assert "hello there" in capsys.readouterr().out


def test_a_runs_usage_limits_and_stop_tools_hold_in_the_sandbox(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "add", "--model", "fixture:tool", "--tool", "fixture_add"]
    args += ["--environment", "sandbox"]
    assert main([*args, "--stop-at-tool", "fixture_add"]) == 0
    out, err = capsys.readouterr()
    assert out == "5\n" and "complete, 1 turn," in err

    assert main([*args, "--max-tool-calls", "0"]) == 0
    assert "Stopped at the turn's limit of 0 tool calls" in capsys.readouterr().err


def test_a_tool_that_must_be_isolated_is_refused_in_a_plain_child(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "hi", "--model", "fixture:echo", "--environment", "process", "--tool", "shell"]
    assert main(args) == EXIT_ENVIRONMENT
    assert "tool 'shell' must run isolated" in capsys.readouterr().err


def test_an_unknown_environment_lists_the_installed_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "hi", "--model", "fixture:echo", "--environment", "docker"]) == 3
    assert "unknown environment 'docker'; available: local, process, sandbox" in (
        capsys.readouterr().err
    )


def test_an_environment_with_a_remote_orchestrator_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "hi", "--environment", "sandbox", "--orchestrator", "temporal"]
    assert main(args) == 2
    assert "--environment works with the local orchestrator" in capsys.readouterr().err


def test_a_hosted_tool_goes_into_the_environments_recipe_and_is_checked_before_the_child(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "hi", "--model", "fixture:echo", "--environment", "process"]
    assert main([*args, "--hosted-tool", "web_search"]) == 2
    err = capsys.readouterr().err
    assert "--hosted-tool: the provider FixtureProvider does not run the hosted tool(s) " in err
    assert "web_search" in err


def test_a_call_held_for_approval_in_the_sandbox_runs_there_once_resumed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--model", "fixture:tool", "--tool", "fixture_add", "--approve-tool", "fixture_add"]
    args += ["--environment", "sandbox"]
    assert main(["run", "add", *args, "--session", "held"]) == EXIT_AWAITING_APPROVAL
    err = capsys.readouterr().err
    assert "waiting for approval of 1 tool call(s) in session held:" in err
    assert '  call_1  fixture_add  {"a": 2, "b": 3}' in err
    # The printed resume runs the call where the turn runs, never outside the sandbox.
    assert "approve: neuron-turn resume held --approve call_1 " in err
    assert err.count("--environment sandbox") == 2
    assert main(["history", "held"]) == 0
    assert "tool_result" not in capsys.readouterr().out  # the call waits, unrun

    assert main(["resume", "held", "--approve", "call_1", *args]) == 0
    assert capsys.readouterr().out == "the sum is 5\n"


@pytest.mark.parametrize("environment", ["process", "sandbox"])
def test_temperature_and_sampling_reach_the_model_from_a_turn_in_an_environment(
    capsys: pytest.CaptureFixture[str], environment: str
) -> None:
    args = ["run", "hi", "--model", "fixture:sampled", "--environment", environment]
    flags = ["--temperature", "0.2", "--top-p", "0.5", "--seed", "7", "--stop", "END"]
    assert main([*args, *flags]) == 0
    assert capsys.readouterr().out == (
        "temperature=0.2 Sampling(top_p=0.5, stop_sequences=('END',), seed=7)\n"
    )


def test_a_sampling_setting_the_provider_does_not_take_is_refused_before_the_child(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "hi", "--model", "fixture:echo", "--environment", "process", "--top-k", "3"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--top-p/--top-k/--seed/--stop: the provider FixtureProvider does not take" in err
    assert "top_k" in err
