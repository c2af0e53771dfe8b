"""A server flooding its client with notices, or sending them in wrong shapes, costs bounded
memory and work and never ends the session.

Against a hand-written peer (`mcp_servers/noisy.py`) that sends its notices before
it answers the request that asked for them, on the one pipe: when the answer is
in, every notice before it has been taken.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from neuron_tool.mcp import MCPClient, MCPResourceUpdate
from neuron_tool.mcp.subscriptions import MAX_PENDING_UPDATES

from .changes import WAIT, Updates, names
from .mcp_servers.noisy import UPDATES
from .mcp_servers.paths import script


def noisy(**options: Any) -> MCPClient:
    command, *args = script("noisy")
    return MCPClient.stdio(command, [*args, "flood"], name="noisy", timeout=60.0, **options)


async def test_a_flood_of_updates_keeps_only_the_newest_waiting_while_the_handler_is_busy(
    caplog: pytest.LogCaptureFixture,
) -> None:
    heard: list[str] = []
    release, last = asyncio.Event(), asyncio.Event()

    async def busy(update: MCPResourceUpdate) -> None:
        heard.append(update.uri)
        if len(heard) == 1:
            await release.wait()
        if update.uri == f"flood://{UPDATES - 1}":
            last.set()

    async with noisy(on_resource_updated=busy) as client:
        await client.subscribe_resource("flood://")
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.read_resource("flood://updates")
            release.set()
            async with asyncio.timeout(WAIT):
                await last.wait()
        assert await client.call_tool("anything", {}) == "anything"

    newest = [f"flood://{index}" for index in range(UPDATES - MAX_PENDING_UPDATES, UPDATES)]
    assert heard[1:] == newest
    dropped = UPDATES - 1 - MAX_PENDING_UPDATES
    messages = [record.getMessage() for record in caplog.records]
    assert (
        "MCP server 'noisy' sends resource updates faster than on_resource_updated takes them;"
        f" past {MAX_PENDING_UPDATES} waiting, the oldest are dropped"
    ) in messages
    assert (
        f"{dropped} resource updates of MCP server 'noisy' were dropped, newer ones kept"
    ) in messages


async def test_updates_of_resources_never_subscribed_to_are_not_taken() -> None:
    updates = Updates()
    async with noisy(on_resource_updated=updates) as client:
        await client.read_resource("flood://updates")  # none of them subscribed to
        await client.subscribe_resource("flood://good")
        await client.read_resource("flood://shapes")
        await updates.count("flood://good")

    # The handler takes updates oldest first: any of the flood would have come first.
    assert updates.uris == ["flood://good"]


async def test_a_flood_of_list_change_notices_costs_one_listing() -> None:
    async with noisy() as client:
        assert names(await client.list_tools()) == ["listed_1"]  # listed when connecting
        await client.read_resource("flood://notices")
        assert names(await client.list_tools()) == ["listed_2"]
        assert names(await client.list_tools()) == ["listed_2"]


async def test_notices_of_the_wrong_shape_are_ignored_and_the_session_goes_on() -> None:
    updates = Updates()
    async with noisy(on_resource_updated=updates) as client:
        await client.subscribe_resource("flood://")
        await client.read_resource("flood://shapes")
        await updates.count("flood://good")
        (read,) = await client.read_resource("flood://good")
        tools = names(await client.list_tools())

    assert updates.uris == ["flood://good"]
    assert read.text == "done"
    # A list change notice whose params are not MCP's is not taken for one.
    assert tools == ["listed_1"]
