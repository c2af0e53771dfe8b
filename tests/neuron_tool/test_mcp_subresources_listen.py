"""Updates of sub-resources on MCP 2026-07-28: told on the `subscriptions/listen` stream.

MCP lets a server say that a sub-resource of a subscribed URI (a URI beginning
with it) was updated. The handshake era's tests are in `test_mcp_subscriptions`
and `test_mcp_notice_floods`; these are the same against the real changing
server over stdio and loopback HTTP speaking 2026-07-28, whose `update` tells a
stream of a sub-resource of a URI it carries, and whose `tell` tells every stream
of any URI, as a careless server might.
"""

from __future__ import annotations

import asyncio

import pytest

from neuron_tool.mcp import MCPResourceUpdate
from neuron_tool.mcp.subscriptions import ResourceUpdates

from .changes import MODERN, TRANSPORTS, WAIT, Updates, changing

NOTE = "note://current"
OTHER = "note://other"
MARGIN = f"{NOTE}/margin"


@pytest.fixture(params=MODERN)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


class Pushed:
    """URIs the client took updates of, as they arrive (patched into `ResourceUpdates.push`).

    Over HTTP an update comes on the stream's response, not the tool call's: the
    call's answer says nothing of whether the update has arrived yet.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.uris: list[str] = []
        self._arrived = asyncio.Event()
        push = ResourceUpdates.push

        def pushed(updates: ResourceUpdates, uri: str) -> None:
            push(updates, uri)
            self.uris.append(uri)
            self._arrived.set()

        monkeypatch.setattr(ResourceUpdates, "push", pushed)

    async def arrived(self, uri: str) -> None:
        """Wait until the client has taken an update of `uri`."""
        async with asyncio.timeout(WAIT):
            while uri not in self.uris:
                self._arrived.clear()
                await self._arrived.wait()


async def test_a_sub_resource_told_on_the_stream_reaches_the_handler(transport: str) -> None:
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.call_tool("update", {"uri": "note://unrelated", "text": "-"})
        await client.call_tool("update", {"uri": MARGIN, "text": "a remark"})
        await updates.count(MARGIN)
        (read,) = await client.read_resource(NOTE)

    assert updates.updates == [MCPResourceUpdate(server="changing", uri=MARGIN)]
    assert read.text == "first"  # the resource itself is as it was


async def test_a_sub_resource_is_told_again_on_the_stream_reopened_after_the_server_ends_it(
    transport: str,
) -> None:
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.call_tool("end_streams", {})
        await updates.count(NOTE)  # told once it is back, as it may have changed unseen
        await client.call_tool("update", {"uri": MARGIN, "text": "after the reopening"})
        await updates.count(MARGIN)

    assert updates.uris == [NOTE, MARGIN]


async def test_updates_on_the_stream_of_uris_neither_subscribed_nor_under_one_are_not_taken(
    transport: str,
) -> None:
    updates = Updates()
    too_long = f"{NOTE}/{'x' * 8192}"  # a sub-resource, but past the length taken
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)  # one stream: the order told is the order heard
        # A sibling beginning with the URI's text (`note://current-x`) is no sub-resource.
        for uri in ("note://unrelated", "note://", f"{NOTE}-x", too_long, MARGIN):
            await client.call_tool("tell", {"uri": uri})
        await updates.count(MARGIN)

    # The handler takes updates oldest first: any told before would have come first.
    assert updates.uris == [MARGIN]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unsubscribing_drops_a_waiting_update_of_a_sub_resource(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pushed = Pushed(monkeypatch)
    heard: list[str] = []
    busy, release, done = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def slow(update: MCPResourceUpdate) -> None:
        heard.append(update.uri)
        busy.set()
        await release.wait()
        if update.uri == f"{OTHER}/after":
            done.set()

    async with changing(transport, on_resource_updated=slow) as client:
        await client.subscribe_resource(NOTE)
        await client.subscribe_resource(OTHER)
        await client.call_tool("update", {"uri": OTHER, "text": "keeps the handler busy"})
        async with asyncio.timeout(WAIT):
            await busy.wait()
        await client.call_tool("update", {"uri": MARGIN, "text": "waits"})
        await pushed.arrived(MARGIN)
        await client.unsubscribe_resource(NOTE)
        await client.call_tool("update", {"uri": f"{OTHER}/after", "text": "still heard"})
        await pushed.arrived(f"{OTHER}/after")
        release.set()
        async with asyncio.timeout(WAIT):
            await done.wait()

    assert heard == [OTHER, f"{OTHER}/after"]
