"""`neuron-turn run --mcp-url URL --mcp-token-env VAR`: the bearer token `serve_http` asks for."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator

import pytest

from neuron_tool import ToolRegistry, tool
from neuron_tool.mcp import serve_http
from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_TOOL_SOURCE, EXIT_USAGE
from tests.serving import running, running_in_thread

TOKEN = "cli-mcp-token-0123456789abcdef"


@tool(name="fixture_add")
async def remote_add(a: int, b: int) -> str:
    """Add two numbers, on the MCP server."""
    return f"{a + b} (from the MCP server)"


pytestmark = pytest.mark.usefixtures("fixture_plugins")


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    """A token-protected Streamable HTTP server on loopback, on a loop of its own thread.

    Its own thread: `main` runs its own event loop (`asyncio.run`), as on a command line.
    """
    registry = ToolRegistry([remote_add])

    def serve(ready: Callable[[str], object]) -> Awaitable[None]:
        return serve_http(registry, port=0, token=TOKEN, on_ready=ready)

    with running_in_thread(lambda: running(serve)) as url:
        yield url


def run_against(url: str) -> list[str]:
    return ["run", "add", "--model", "fixture:tool", "--mcp-url", url, "--jsonl"]


def test_the_token_from_the_named_variable_reaches_a_protected_server(
    mcp_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_MCP_TOKEN", TOKEN)
    assert main([*run_against(mcp_url), "--mcp-token-env", "MY_MCP_TOKEN"]) == 0
    out, _ = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    result = next(event for event in events if event["type"] == "tool_result")
    assert (result["content"], result["is_error"]) == ("5 (from the MCP server)", False)
    assert TOKEN not in out


def test_without_the_token_the_server_refuses_and_the_run_says_which_server(
    mcp_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(run_against(mcp_url)) == EXIT_TOOL_SOURCE
    _, err = capsys.readouterr()
    assert "--mcp-url" in err


def test_a_wrong_token_is_refused_and_never_printed(
    mcp_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_MCP_TOKEN", "wrong-token-abcdef0123456789")
    assert main([*run_against(mcp_url), "--mcp-token-env", "MY_MCP_TOKEN"]) == EXIT_TOOL_SOURCE
    _, err = capsys.readouterr()
    assert "wrong-token" not in err


def test_an_unset_token_variable_is_a_usage_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("NO_SUCH_TOKEN_VAR", raising=False)
    argv = [*run_against("http://127.0.0.1:9/mcp"), "--mcp-token-env", "NO_SUCH_TOKEN_VAR"]
    assert main(argv) == EXIT_USAGE
    _, err = capsys.readouterr()
    assert err == (
        "neuron-turn: error: --mcp-token-env: the environment variable "
        "NO_SUCH_TOKEN_VAR is not set\n"
    )
