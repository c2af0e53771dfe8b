"""`mcp_tools`: what the command line's `--mcp` and `--mcp-url` flags use."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from neuron_tool import MCPBridgeError, ToolRegistry
from neuron_tool.mcp import HttpEndpoint, MCPConnectionError, mcp_tools, serve_http

from .mcp_servers.paths import script
from .mcp_servers.registry import build_registry

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOOLBOX = shlex.join(script("toolbox"))
TOKEN = "toolset-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def http_url() -> AsyncIterator[HttpEndpoint]:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve_http(build_registry(), port=0, token=TOKEN, on_ready=ready.set_result)
    )
    yield HttpEndpoint(await ready, AUTH)
    server.cancel()
    await asyncio.wait([server])


async def test_tools_of_commands_and_urls_come_together(http_url: HttpEndpoint) -> None:
    async with mcp_tools(commands=[TOOLBOX], urls=[http_url]) as tools:
        registry = ToolRegistry(tools)
        assert {"echo", "dotted_name", "add", "greet"} <= set(registry.names())
        assert await registry.call("echo", {"text": "hi"}) == "hi"
        assert await registry.call("add", {"a": 1, "b": 1}) == 2
        assert {tool.server for tool in tools} == {"toolbox.py", http_url.url}


async def test_two_servers_offering_one_name_is_an_error(http_url: HttpEndpoint) -> None:
    with pytest.raises(MCPBridgeError, match="both offer a tool named 'add'"):
        async with mcp_tools(urls=[http_url, http_url]):
            pass


async def test_a_server_that_cannot_start_fails_the_whole_set(http_url: HttpEndpoint) -> None:
    with pytest.raises(MCPConnectionError, match="/nonexistent/server"):
        async with mcp_tools(urls=[http_url], commands=["/nonexistent/server --flag"]):
            pass


async def test_an_empty_command_line_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        async with mcp_tools(commands=["  "]):
            pass
