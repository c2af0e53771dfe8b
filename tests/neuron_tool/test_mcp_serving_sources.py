"""A served registry's tool sources are asked per request: an MCP gateway to other servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from neuron_tool import (
    MCPBridgeError,
    RunContext,
    ToolDyn,
    ToolRegistry,
    filtered_tools,
    prefixed_tools,
    tool,
    tool_source,
)
from neuron_tool.mcp import MCPClient, serve_http

from .changes import changing

TOKEN = "test-token-0123456789abcdef"


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@tool
def whoami(ctx: RunContext[dict[str, str]]) -> str:
    """Say who is served."""
    return ctx.deps["tenant"]


@tool_source
def tenant_tools(ctx: RunContext[dict[str, str]]) -> list[ToolDyn]:
    return [whoami] if ctx.deps["tenant"] == "acme" else []


@asynccontextmanager
async def serving(registry: ToolRegistry, deps: Any) -> AsyncIterator[MCPClient]:
    """A client of `registry` served over Streamable HTTP on loopback behind the token."""
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve_http(registry, port=0, token=TOKEN, on_ready=ready.set_result, deps=deps)
    )
    try:
        async with MCPClient.http(await ready, token=TOKEN, name="gateway", cache_lists=False) as c:
            yield c
    finally:
        server.cancel()
        await asyncio.wait([server])


async def _names(client: MCPClient) -> list[str]:
    return sorted(t.name for t in await client.list_tools())


async def test_a_gateway_serves_another_servers_allowed_tools_prefixed_as_they_are_now() -> None:
    async with changing("stdio", cache_lists=False) as upstream:
        allowed = filtered_tools(upstream, allow=["echo", "add_tool", "fresh"])
        registry = ToolRegistry([ping, prefixed_tools(allowed, "up_"), tenant_tools])
        async with serving(registry, {"tenant": "acme"}) as client:
            before = await _names(client)
            echoed = await client.call_tool("up_echo", {"text": "through"})
            await client.call_tool("up_add_tool", {"name": "fresh"})
            after = await _names(client)
            fresh = await client.call_tool("up_fresh", {})
            tenant = await client.call_tool("whoami", {})
            with pytest.raises(MCPBridgeError, match="unknown tool 'up_counts'"):
                await client.call_tool("up_counts", {})  # the upstream has it; not allowed

    assert before == ["ping", "up_add_tool", "up_echo", "whoami"]
    assert echoed == "through" and fresh == "fresh" and tenant == "acme"
    assert after == ["ping", "up_add_tool", "up_echo", "up_fresh", "whoami"]


async def test_a_served_source_sees_the_servers_deps() -> None:
    async with serving(ToolRegistry([ping, tenant_tools]), {"tenant": "globex"}) as client:
        assert await _names(client) == ["ping"]


async def test_a_failing_source_fails_the_listing_naming_it_and_the_server_goes_on() -> None:
    down = [False]

    @tool_source
    def flaky(ctx: RunContext[None]) -> list[ToolDyn]:
        if down[0]:
            raise ConnectionError("the directory is gone")
        return []

    async with serving(ToolRegistry([ping, flaky]), None) as client:
        down[0] = True
        with pytest.raises(MCPBridgeError, match="tool source 'flaky' raised ConnectionError"):
            await client.list_tools()
        down[0] = False
        assert await _names(client) == ["ping"]
