"""Where the test servers are, and clients for them; third-party ones must have been installed."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from neuron_tool.mcp import MCPClient

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
EVERYTHING = REPO / ".cache/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
LOOPBACK = HERE / "loopback.mjs"
_RUN_SETUP = "; run scripts/setup --test (its step setup.d/test-mcp-servers installs the servers)"


def script(name: str) -> list[str]:
    """The command line (`python path`) that runs one of the scripts here."""
    return [sys.executable, str(HERE / f"{name}.py")]


def script_client(script_name: str, /, **options: Any) -> MCPClient:
    """A stdio client for one of the scripts here."""
    command, *args = script(script_name)
    return MCPClient.stdio(command, args, **options)


def time_server_command() -> list[str]:
    """`python -m mcp_server_time` in this venv; fails the test if it is not installed."""
    if importlib.util.find_spec("mcp_server_time") is None:
        pytest.fail("mcp-server-time is not installed in this venv" + _RUN_SETUP)
    return [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


def everything_command(*transport: str) -> list[str]:
    """`node .../server-everything/dist/index.js [transport]`, bound to loopback when it listens.

    Fails the test if the package is missing from `.cache/npm`.
    """
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH; the MCP bridge tests need Node.js 20 or later")
    if not EVERYTHING.is_file():
        pytest.fail(f"{EVERYTHING} is missing" + _RUN_SETUP)
    return [node, "--import", LOOPBACK.as_uri(), str(EVERYTHING), *transport]
