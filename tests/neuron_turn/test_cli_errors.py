"""Every command-line error is one line and an exit code: bad usage, MCP servers, deadlines."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from layer0 import TurnConfig
from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_TOOL_SOURCE, EXIT_USAGE
from neuron_turn.cli._run import _left_after
from neuron_turn.plugins import reset_plugin_manager

PLUGINS = "fixture-plugin,state-sqlite,orch-local"
SILENT = Path(__file__).parents[1] / "neuron_tool" / "mcp_servers" / "silent.py"
"""A stdio process that never answers the MCP handshake."""


@pytest.fixture(autouse=True)
def plugins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    reset_plugin_manager()
    yield
    reset_plugin_manager()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", "hi", "--mcp", ""], "argument --mcp: empty"),
        (["run", "hi", "--mcp", "   "], "argument --mcp: empty"),
        (["run", "hi", "--mcp", '"unclosed'], "No closing quotation"),
        (["worker", "--mcp", ""], "argument --mcp: empty"),
        (["run", "hi", "--mcp-url", ""], "argument --mcp-url: not an http(s) URL"),
        (["run", "hi", "--mcp-url", "ftp://example.com/mcp"], "not an http(s) URL"),
        (["run", "hi", "--max-turns", "0"], "argument --max-turns"),
        (["run", "hi", "--max-tool-calls", "-1"], "argument --max-tool-calls: must be 0 or more"),
        (["run", "hi", "--max-total-tokens", "1e3"], "argument --max-total-tokens: not a whole"),
        (["run", "hi", "--option", "base_url"], "argument --option: expected KEY=VALUE"),
        ([], "required: COMMAND"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    [line] = err.splitlines()
    assert line.startswith("neuron-turn") and says in line
    assert line.endswith("--help)")


def test_a_hanging_mcp_server_is_bounded_by_max_duration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = f"{sys.executable} {SILENT}"
    argv = ["run", "hi", "--model", "fixture:echo", "--mcp", server, "--max-duration", "1.5"]
    assert main(argv) == EXIT_TOOL_SOURCE
    [line] = capsys.readouterr().err.splitlines()
    assert "handshake within 1.5 s" in line
    assert "silent: thinking very hard" in line  # its stderr, to say why


def test_the_turn_gets_what_is_left_of_max_duration_after_connecting() -> None:
    started = time.monotonic() - 0.4  # connecting took 0.4 s
    left = _left_after(TurnConfig(max_duration=1000), started).max_duration
    assert left is not None and 0 < left <= 600
    assert _left_after(TurnConfig(max_duration=100), started).max_duration == 1
    assert _left_after(TurnConfig(), started).max_duration is None
