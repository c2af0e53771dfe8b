"""MCP sampling on the command line: `--mcp-sampling` lets the servers have the run's model write.

The `samples` test server's `haiku` tool asks the client's model for a haiku;
the fixture model calls it, answers the server's request, then reports what
the tool said.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.neuron_tool.mcp_servers.paths import script

from .cli_process import fixture_env, neuron_turn

SERVER = " ".join(shlex.quote(part) for part in script("samples"))
ASK = ["run", "a haiku, please", "--model", "fixture:first-tool", "--mcp", SERVER]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return fixture_env(tmp_path)


def test_with_mcp_sampling_the_servers_request_is_answered_by_the_runs_model(
    env: dict[str, str],
) -> None:
    done = neuron_turn(env, *ASK, "--mcp-sampling")

    assert done.returncode == 0, done.stderr
    assert "the tool said: " in done.stdout
    assert "wrote for: A haiku on rain, please." in done.stdout


def test_without_it_the_server_is_told_the_client_does_not_sample(env: dict[str, str]) -> None:
    done = neuron_turn(env, *ASK)

    assert done.returncode == 0, done.stderr
    assert "the tool said: " in done.stdout and "wrote for" not in done.stdout
    assert "sampling" in done.stdout.lower()


def test_mcp_sampling_without_a_server_says_there_is_none_to_sample(env: dict[str, str]) -> None:
    done = neuron_turn(env, "run", "hi", "--model", "fixture:echo", "--mcp-sampling")

    assert done.returncode == 0, done.stderr
    assert "--mcp-sampling lets MCP servers (--mcp, --mcp-url) sample; none was given" in (
        done.stderr
    )
