"""End to end: `neuron-turn run --model anthropic:claude-haiku-4-5` against a cassette.

The real command line, plugins found through their entry points, the
Anthropic provider over httpx (replayed by vcrpy), the calculator from the
tools plugin, the local orchestrator and the SQLite store: a two-step tool
loop, the final answer, and tokens and a non-zero cost in the summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.plugins import reset_plugin_manager
from tests.cassettes import CASSETTES, replay

SUMMARY = re.compile(
    r"complete, 2 turns, (?P<tin>\d+) tokens in / (?P<tout>\d+) out, \$(?P<cost>[\d.]+), [\d.]+s"
)


@pytest.fixture(autouse=True)
def plugins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    plugins = "provider-anthropic,tools-basic,state-sqlite,orch-local"
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", plugins)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def test_run_replays_a_two_step_tool_loop_and_reports_tokens_and_cost(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [
        "run",
        "What is 17 * 23? Use the calculator.",
        "--model",
        "anthropic:claude-haiku-4-5",
        "--system",
        "You are a helpful assistant. Use the calculator tool for arithmetic.",
        "--tool",
        "calculator",
        "--allow-tool",
        "calculator",
    ]
    match_on = ("method", "scheme", "host", "port", "path")
    with replay(CASSETTES / "anthropic" / "tool_loop.yaml", match_on=match_on) as cassette:
        assert main(argv) == 0
    assert cassette.play_count == 2
    out, err = capsys.readouterr()
    # Every model call's text reaches stdout as it arrives, each call's on its own line:
    # the first call's words before its tool call, then the answer.
    assert out == "I'll calculate that for you.\n17 * 23 = 391.\n"
    summary = next(m for m in map(SUMMARY.fullmatch, err.splitlines()) if m)
    assert (summary["tin"], summary["tout"]) == ("905", "82")
    assert summary["cost"] == "0.0013"
    assert "sk-ant-test" not in out + err
