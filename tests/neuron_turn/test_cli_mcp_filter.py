"""`--mcp-allow` and `--mcp-block`: a few of the MCP servers' tools on the command line.

Against the `changing` test server over stdio; the fixture model `list-tools`
answers with the names of the tools it was offered, `first-tool` calls the
first of them.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest

from neuron_turn import EFFECT_TOOL_NAMES, MEMORY_TOOL_NAMES
from neuron_turn.cli import _add_run_options, _parser
from neuron_turn.cli._approve import resume_options
from tests.neuron_tool.mcp_servers.paths import script

from .cli_process import fixture_env, neuron_turn

SERVER = " ".join(shlex.quote(part) for part in script("changing"))
LIST = ["run", "hi", "--model", "fixture:list-tools", "--mcp", SERVER]
"""Asks the fixture model that answers with the names of the tools it was offered."""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return fixture_env(tmp_path)


def _offered(stdout: str) -> set[str]:
    """The tools the model was offered, the loop's effect and memory tools aside."""
    (line,) = [line for line in stdout.splitlines() if line.startswith("tools: ")]
    return set(line.removeprefix("tools: ").split(", ")) - MEMORY_TOOL_NAMES - EFFECT_TOOL_NAMES


def test_mcp_allow_offers_only_the_named_tools(env: dict[str, str]) -> None:
    done = neuron_turn(env, *LIST, "--mcp-allow", "echo", "--mcp-allow", "counts")

    assert done.returncode == 0, done.stderr
    assert _offered(done.stdout) == {"echo", "counts"}


def test_mcp_block_leaves_the_named_tools_out_and_wins_over_allow(env: dict[str, str]) -> None:
    everything = neuron_turn(env, *LIST)
    done = neuron_turn(
        env, *LIST, "--mcp-block", "add_tool", "--mcp-block", "echo", "--mcp-allow", "echo",
        "--mcp-allow", "pid",
    )  # fmt: skip

    assert everything.returncode == done.returncode == 0, done.stderr
    assert {"add_tool", "echo", "pid"} <= _offered(everything.stdout)
    assert _offered(done.stdout) == {"pid"}


def test_an_allowed_tool_is_called_on_its_server(env: dict[str, str]) -> None:
    done = neuron_turn(
        env, "run", "hi", "--model", "fixture:first-tool", "--mcp", SERVER, "--mcp-allow", "pid"
    )

    assert done.returncode == 0, done.stderr
    said = done.stdout.strip().removeprefix("the tool said: ")
    assert said.isdigit()  # the server's process id: the call reached it


def test_a_name_no_server_offers_exits_2_naming_the_flag_and_what_they_offer(
    env: dict[str, str],
) -> None:
    done = neuron_turn(
        env, "run", "hi", "--model", "fixture:list-tools", "--mcp", SERVER, "--mcp-allow", "ech0"
    )

    assert done.returncode == 2
    assert "--mcp-allow names tools no MCP server offers: ech0; they offer: " in done.stderr
    assert "echo" in done.stderr and "tools: " not in done.stdout


def test_mcp_allow_without_a_server_exits_2(env: dict[str, str]) -> None:
    done = neuron_turn(env, "run", "hi", "--model", "fixture:list-tools", "--mcp-block", "echo")

    assert done.returncode == 2
    assert "--mcp-block names tools of MCP servers; give an --mcp or --mcp-url" in done.stderr


def test_a_paused_runs_resume_command_names_the_filters_again() -> None:
    args = _parser().parse_args(
        ["run", "hi", "--mcp", SERVER, "--mcp-allow", "echo", "--mcp-block", "pid"]
    )
    scratch = argparse.ArgumentParser(add_help=False)
    _add_run_options(scratch)

    words = resume_options(args, scratch, None)

    assert words == ["--mcp", SERVER, "--mcp-allow", "echo", "--mcp-block", "pid"]
    again = _parser().parse_args(["resume", "s1", "--approve", "c1", *words])
    assert (again.mcp_allow, again.mcp_block) == (["echo"], ["pid"])
