"""`neuron-turn run --grant` and `--fail-if-changed`; concurrent runs on a session lose nothing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from layer0 import EffectPolicy
from neuron_turn import cli
from neuron_turn.cli import main

PLUGINS = "fixture-plugin,state-sqlite,orch-local"


pytestmark = pytest.mark.usefixtures("fixture_plugins")


def test_by_default_the_model_is_offered_only_its_sessions_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "hi", "--model", "fixture:list-tools"]) == 0
    out = capsys.readouterr().out
    assert out == "tools: write_memory, delete_memory, read_memory, list_memory, search_memory\n"
    argv = ["run", "hi", "--model", "fixture:list-tools", "--grant", "delegate", "--grant", "*"]
    assert main(argv) == 0
    assert "delegate, handoff, signal" in capsys.readouterr().out


def test_a_model_reaching_outside_the_grant_reads_a_refusal_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "secret", "--model", "fixture:reach", "--session", "s"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("the tool said: Refused: write_memory in scope 'global' is not granted")
    assert main(["run", "shared", "--model", "fixture:reach", "--grant", "global"]) == 0
    assert capsys.readouterr().out == "the tool said: Memory written.\n"


def test_a_malformed_grant_is_a_usage_error_saying_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "hi", "--grant", "workflow"])
    assert exited.value.code == 2
    assert "bad grant 'workflow': say which workflow" in capsys.readouterr().err


def test_grants_and_fail_if_changed_go_into_the_calls_config() -> None:
    argv = ["run", "x", "--grant", "global", "--grant", "delegate:b", "--fail-if-changed"]
    config = cli._config(cli._parser().parse_args(argv))
    assert config.effect_policy == EffectPolicy.of(["global", "delegate:b"])
    assert config.session_conflict == "fail"
    unset = cli._config(cli._parser().parse_args(["run", "x"]))
    assert (unset.effect_policy, unset.session_conflict) == (None, None)


def test_20_concurrent_processes_on_one_session_keep_every_exchange_contiguous(
    tmp_path: Path,
) -> None:
    env = {
        **os.environ,
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "shared.db"),
    }
    base = [sys.executable, "-m", "neuron_turn"]
    prompts = [f"run-{process}-{turn}" for process in range(4) for turn in range(5)]
    running = [
        subprocess.Popen(
            [*base, "run", prompt, "--model", "fixture:echo", "--session", "s"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for prompt in prompts
    ]
    for process in running:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    shown = subprocess.run(
        [*base, "history", "s", "--json"], capture_output=True, text=True, env=env, timeout=60
    )
    history = json.loads(shown.stdout)
    assert len(history) == 40
    pairs = [(history[i], history[i + 1]) for i in range(0, 40, 2)]
    for user, assistant in pairs:
        assert user["role"] == "user" and assistant["role"] == "assistant"
        assert assistant["content"] == f"echo: {user['content']}"
    assert sorted(user["content"] for user, _ in pairs) == sorted(prompts)
    listed = subprocess.run(
        [*base, "sessions", "--json"], capture_output=True, text=True, env=env, timeout=60
    )
    assert [(e["session"], e["runs"]) for e in json.loads(listed.stdout)] == [("s", 20)]


def test_runs_counted_before_per_run_keys_are_kept_in_the_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from neuron_state_sqlite import SqliteStore

    async def legacy() -> None:
        async with SqliteStore(tmp_path / "state.db") as store:
            entry = {"session": "old", "title": "t", "updated": "2026-01-01T00:00:00+00:00"}
            await store.write("global", "neuron-turn/sessions/old", {**entry, "runs": 3})

    asyncio.run(legacy())
    assert main(["run", "again", "--model", "fixture:echo", "--session", "old"]) == 0
    capsys.readouterr()
    assert main(["sessions", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert (entry["runs"], entry["title"]) == (4, "t")


def test_worker_grants_build_the_turns_and_the_workers_policy() -> None:
    args = cli._parser().parse_args(["worker", "--grant", "global", "--grant", "signal"])
    spec = cli._turn_spec(args)
    assert spec.effect_policy() == EffectPolicy.of(["global", "signal"])


def test_a_changed_session_under_fail_if_changed_has_its_own_exit_code_and_line() -> None:
    from layer0 import DispatchFailed, HistoryConflict
    from neuron_turn.cli._errors import EXIT_CONFLICT, classify

    conflict = HistoryConflict("s", expected=2, found=4)
    failed = DispatchFailed("the memory effects of agent 'main' were not applied")
    failed.__cause__ = conflict
    for error in (conflict, failed):
        code, line = classify(error, model=None)
        assert code == EXIT_CONFLICT == 12
        assert "session 's' changed while this turn ran" in line
        assert "--fail-if-changed" in line
    help_text = cli._parser().format_help()
    assert "12   with --fail-if-changed" in help_text
