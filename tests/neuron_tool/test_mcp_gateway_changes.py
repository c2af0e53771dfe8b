"""A served registry tells its MCP clients when its sources' tools change: a gateway's word.

Against real peers: the changing server over stdio upstream, our gateway served
over Streamable HTTP on loopback behind its token, and our `MCPClient` (MCP
2026-07-28, hearing changes on its `subscriptions/listen` stream) or the SDK's
client speaking the 2025-11-25 handshake (hearing notices on its session)
downstream. Nothing sleeps: each test waits on what a client hears, bounded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from neuron_tool import RunContext, ToolDyn, ToolRegistry, prefixed_tools, tool, tool_source
from neuron_tool.mcp import MCPClient, MCPListChange, mcp_server, serve_http
from neuron_tool.source import ToolChanges

from .changes import WAIT, changing, names

TOKEN: Final = "test-token-0123456789abcdef"


class Told:
    """An `on_list_changed` handler recording what a gateway's client is told."""

    def __init__(self) -> None:
        self.changes: list[MCPListChange] = []
        self._arrived = asyncio.Condition()

    async def __call__(self, change: MCPListChange) -> None:
        async with self._arrived:
            self.changes.append(change)
            self._arrived.notify_all()

    async def tools(self, times: int = 1) -> None:
        """Wait until the client has been told `times` times that the tools changed."""
        async with asyncio.timeout(WAIT), self._arrived:
            await self._arrived.wait_for(lambda: self.kinds.count("tools") >= times)

    @property
    def kinds(self) -> list[str]:
        return [change.kind for change in self.changes]


@asynccontextmanager
async def gateway(registry: ToolRegistry) -> AsyncIterator[str]:
    """`registry` served over Streamable HTTP on loopback behind the token; yields its URL."""
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve_http(registry, port=0, token=TOKEN, on_ready=ready.set_result)
    )
    try:
        yield await ready
    finally:
        server.cancel()
        await asyncio.wait([server])


def _client(url: str, told: Told) -> MCPClient:
    return MCPClient.http(url, token=TOKEN, name="gateway", on_list_changed=told)


class _Saying:
    """A tool source of one's own that says when its tools change (`tool_changes`)."""

    def __init__(self, changes: ToolChanges, tools: list[ToolDyn]) -> None:
        self.tool_changes = changes
        self.tools = tools

    async def tools_for(self, context: RunContext[Any]) -> list[ToolDyn]:
        return self.tools


async def test_a_gateway_client_is_told_when_the_upstream_adds_a_tool_and_then_lists_it() -> None:
    told = Told()
    async with changing("stdio") as upstream:
        registry = ToolRegistry([prefixed_tools(upstream, "up_")])
        async with gateway(registry) as url, _client(url, told) as client:
            before = names(await client.list_tools())  # cached from now on
            # The upstream changes on its own (not through the gateway), and says so.
            await upstream.call_tool("add_tool", {"name": "fresh"})
            await told.tools()
            after = names(await client.list_tools())
            fresh = await client.call_tool("up_fresh", {})

    assert "up_fresh" not in before and "up_fresh" in after
    assert fresh == "fresh"
    assert set(told.kinds) == {"tools"}


async def test_a_gateway_of_an_uncached_upstream_client_still_tells_its_clients() -> None:
    # Asked afresh on every listing, the upstream client keeps no cache to drop: it must
    # hear its server's changes all the same, for the gateway's clients keep theirs.
    told = Told()
    async with changing("stdio", cache_lists=False) as upstream:
        async with gateway(ToolRegistry([upstream])) as url, _client(url, told) as client:
            before = names(await client.list_tools())
            await upstream.call_tool("add_tool", {"name": "fresh"})
            await told.tools()
            after = names(await client.list_tools())

    assert "fresh" not in before and "fresh" in after


async def test_a_handshake_era_client_gets_the_notice_on_its_session() -> None:
    heard = asyncio.Event()

    async def notices(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    async with changing("stdio") as upstream:
        async with (
            gateway(ToolRegistry([upstream])) as url,
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
            Client(
                streamable_http_client(url, http_client=http),
                mode="legacy",
                message_handler=notices,
            ) as legacy,
        ):
            declared = legacy.server_capabilities.tools
            before = {tool.name for tool in (await legacy.list_tools()).tools}
            await upstream.call_tool("add_tool", {"name": "fresh"})
            async with asyncio.timeout(WAIT):
                await heard.wait()
            after = {tool.name for tool in (await legacy.list_tools()).tools}

    assert declared is not None and declared.list_changed is True
    assert after - before == {"fresh"}


ENABLED: dict[str, bool] = {}


@tool
def enable() -> str:
    """Turn the extra tools on."""
    ENABLED["extra"] = True
    return "enabled"


@tool
def extra() -> str:
    """An extra tool."""
    return "extra"


@tool_source(per_step=True)
def extras(ctx: RunContext[None]) -> list[ToolDyn]:
    return [extra] if ENABLED.get("extra") else []


async def test_a_per_step_source_giving_other_tools_after_a_call_is_told_as_changed() -> None:
    ENABLED.clear()
    told = Told()
    async with gateway(ToolRegistry([enable, extras])) as url, _client(url, told) as client:
        before = names(await client.list_tools())
        await client.call_tool("enable", {})
        await told.tools()
        after = names(await client.list_tools())
        await client.call_tool("enable", {})  # nothing changes this time
        still = names(await client.list_tools())

    assert (before, after, still) == (["enable"], ["enable", "extra"], ["enable", "extra"])
    assert told.kinds == ["tools"]


async def test_a_change_said_from_another_thread_is_told() -> None:
    changes = ToolChanges()

    told = Told()
    async with (
        gateway(ToolRegistry([_Saying(changes, [extra])])) as url,
        _client(url, told) as client,
    ):
        await client.list_tools()
        saying = threading.Thread(target=changes.changed)
        saying.start()
        saying.join()
        await told.tools()


async def test_a_flood_of_changes_is_told_as_a_few_notices_and_the_gateway_goes_on() -> None:
    changes = ToolChanges()

    told = Told()
    async with (
        gateway(ToolRegistry([_Saying(changes, [extra])])) as url,
        _client(url, told) as client,
    ):
        await client.list_tools()
        for _ in range(10_000):
            changes.changed()
        await told.tools()
        listed = names(await client.list_tools())

    assert listed == ["extra"]
    assert len(told.changes) <= 3  # merged by the gateway's gap (and by the client)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_registry_whose_sources_cannot_say_declares_no_list_changes(
    mode: Any,
) -> None:
    @tool_source
    def fixed(ctx: RunContext[None]) -> list[ToolDyn]:
        return [extra]

    async with Client(mcp_server(ToolRegistry([enable, fixed])), mode=mode) as client:
        declared = client.server_capabilities.tools

    assert declared is not None and not declared.list_changed


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_registry_with_a_source_that_can_say_declares_list_changes(mode: Any) -> None:
    changes = ToolChanges()

    async with Client(
        mcp_server(ToolRegistry([prefixed_tools(_Saying(changes, []), "x_")])), mode=mode
    ) as c:
        declared = c.server_capabilities.tools

    assert declared is not None and declared.list_changed is True


async def test_a_gateway_stops_at_once_though_a_client_listens_for_changes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    changes = ToolChanges()

    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve_http(
            ToolRegistry([_Saying(changes, [extra])]),
            port=0,
            token=TOKEN,
            on_ready=ready.set_result,
        )
    )
    async with _client(await ready, Told()) as client:
        await client.list_tools()  # connected: its stream of changes is open
        started = asyncio.get_running_loop().time()
        server.cancel()
        await asyncio.wait([server])
        took = asyncio.get_running_loop().time() - started

    # Not held until uvicorn's graceful shutdown (2 s) gives up on the open stream.
    assert took < 2.0
    assert "graceful shutdown" not in caplog.text
