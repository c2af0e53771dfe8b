"""Subscriptions to a server's resources: each change it tells of reaches `on_resource_updated`.

Against a real server over stdio and loopback HTTP speaking MCP 2026-07-28 (a
`subscriptions/listen` stream per resource) and over stdio speaking 2025-11-25
(`resources/subscribe`); the capability check against a hand-written peer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys

import pytest

from neuron_tool.mcp import (
    MCPCapabilityError,
    MCPClient,
    MCPConnectionError,
    MCPResourceUpdate,
    MCPTimeoutError,
)

from .changes import MODERN, TRANSPORTS, Updates, changing
from .mcp_servers.paths import script

NOTE = "note://current"
OTHER = "note://other"


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


async def test_a_change_of_a_subscribed_resource_reaches_the_handler(transport: str) -> None:
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.call_tool("update", {"uri": NOTE, "text": "second"})
        await updates.count(NOTE)
        (read,) = await client.read_resource(NOTE)

    assert updates.updates == [MCPResourceUpdate(server="changing", uri=NOTE)]
    assert read.text == "second"


async def test_unsubscribing_ends_the_updates_and_subscribing_again_resumes_them(
    transport: str,
) -> None:
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.subscribe_resource(NOTE)  # already subscribed: nothing to do
        await client.subscribe_resource(OTHER)
        await client.unsubscribe_resource(NOTE)
        await client.unsubscribe_resource(NOTE)  # no longer subscribed: nothing to do
        await client.call_tool("update", {"uri": NOTE, "text": "unheard"})
        await client.call_tool("update", {"uri": OTHER, "text": "heard"})
        await updates.count(OTHER)
        heard_then = updates.uris
        await client.subscribe_resource(NOTE)
        await client.call_tool("update", {"uri": NOTE, "text": "heard again"})
        await updates.count(NOTE)

    assert heard_then == [OTHER]
    assert updates.uris[0] == OTHER


async def test_a_sub_resource_the_server_names_reaches_the_handler() -> None:
    updates = Updates()
    async with changing("legacy", on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.call_tool("update", {"uri": "note://unrelated", "text": "-"})
        await client.call_tool("update", {"uri": f"{NOTE}/margin", "text": "a remark"})
        await updates.count(f"{NOTE}/margin")

    assert updates.uris == [f"{NOTE}/margin"]


@pytest.mark.parametrize("transport", ["stdio", "legacy"])
async def test_a_restarted_server_is_subscribed_again_and_each_resource_said_to_have_changed(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.subscribe_resource(OTHER)
        pid = await client.call_tool("pid", {})
        assert isinstance(pid, str)
        os.kill(int(pid), signal.SIGKILL)
        with pytest.raises(MCPConnectionError):
            await client.call_tool("echo", {"text": "anyone?"})
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            assert await client.call_tool("pid", {}) != pid
        # What changed while it was down went unheard: each is said to have changed.
        await updates.count(NOTE)
        await updates.count(OTHER)
        await client.call_tool("update", {"uri": OTHER, "text": "after the restart"})
        await updates.count(OTHER, 2)

    assert sorted(updates.uris) == [NOTE, OTHER, OTHER]
    assert any("restarting" in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("transport", MODERN)
async def test_when_the_server_ends_the_stream_it_is_reopened_and_each_resource_updated(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.subscribe_resource(OTHER)
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("end_streams", {})
            await updates.count(NOTE)
            await updates.count(OTHER)
        # Reopened for both, with nothing asked of the client.
        await client.call_tool("update", {"uri": NOTE, "text": "resumed"})
        await updates.count(NOTE, 2)

    assert sorted(updates.uris) == [NOTE, NOTE, OTHER]
    ended = [r.getMessage() for r in caplog.records if "stream of updates" in r.getMessage()]
    assert len(ended) == 1
    assert ended[0].endswith(
        "its stream of updates of 'note://current', 'note://other' ended (the server ended"
        " it); reopening it in 0.5 s; until then their updates go unheard"
    )


async def test_a_failing_handler_is_logged_and_later_updates_still_reach_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    updates = Updates()

    async def fails_first(update: MCPResourceUpdate) -> None:
        if not updates.updates and update.uri == NOTE:
            updates.updates.append(update)
            raise RuntimeError("the handler broke")
        await updates(update)

    async with changing("legacy", on_resource_updated=fails_first) as client:
        await client.subscribe_resource(NOTE)
        await client.subscribe_resource(OTHER)
        with caplog.at_level(logging.ERROR, logger="neuron_tool.mcp"):
            await client.call_tool("update", {"uri": NOTE, "text": "breaks it"})
            await client.call_tool("update", {"uri": OTHER, "text": "still heard"})
            await updates.count(OTHER)
        assert await client.call_tool("echo", {"text": "and on"}) == "and on"

    assert updates.uris == [NOTE, OTHER]
    (failed,) = [r for r in caplog.records if "on_resource_updated failed" in r.getMessage()]
    assert failed.getMessage() == (
        "on_resource_updated failed for 'note://current' of MCP server 'changing'"
    )
    assert failed.exc_info is not None and "the handler broke" in str(failed.exc_info[1])


async def test_a_server_without_the_subscribe_capability_is_refused_before_any_request() -> None:
    updates = Updates()
    command, *args = script("noisy")
    async with MCPClient.stdio(
        command, [*args, "bare"], name="bare", on_resource_updated=updates
    ) as client:
        with pytest.raises(MCPCapabilityError) as subscribing:
            await client.subscribe_resource(NOTE)
        with pytest.raises(MCPCapabilityError):
            await client.unsubscribe_resource(NOTE)
        seen = await client.call_tool("seen", {})

    assert isinstance(seen, str)
    assert not {"resources/subscribe", "resources/unsubscribe"} & set(json.loads(seen))
    assert subscribing.value.capability == "resources.subscribe"
    assert str(subscribing.value) == (
        "MCP server 'bare' does not declare the 'resources.subscribe' capability, which the"
        " subscription to resource 'note://current' needs; nothing was sent"
    )


async def test_subscribing_without_a_handler_is_refused_before_the_server_is_started() -> None:
    # A server that cannot start: had it been started, this would be a connection error.
    client = MCPClient.stdio(sys.executable, ["-c", "raise SystemExit(3)"], name="never")

    with pytest.raises(ValueError) as caught:
        await client.subscribe_resource(NOTE)

    assert str(caught.value) == (
        "subscribing to 'note://current' needs MCPClient(on_resource_updated=...), the handler"
        " its updates go to; this client has none"
    )


async def test_many_subscriptions_over_http_share_one_stream_and_leave_requests_room() -> None:
    # Over HTTP each stream holds a request open, and the connection pool has 100.
    uris = [f"note://many/{index}" for index in range(150)]
    updates = Updates()
    async with changing("http", on_resource_updated=updates) as client:
        for uri in uris:
            await client.subscribe_resource(uri)
        await client.call_tool("update", {"uri": uris[-1], "text": "the last"})
        await updates.count(uris[-1])
        await client.unsubscribe_resource(uris[-1])
        assert await client.call_tool("echo", {"text": "room left"}) == "room left"

    assert updates.uris == [uris[-1]]


async def test_a_subscription_never_answered_times_out_and_the_session_goes_on() -> None:
    updates = Updates()
    command, *args = script("noisy")
    noisy = MCPClient.stdio(
        command, [*args, "flood"], name="noisy", timeout=1.0, on_resource_updated=updates
    )
    async with noisy as client:
        with pytest.raises(MCPTimeoutError) as caught:
            await client.subscribe_resource("hang://")
        await client.subscribe_resource("flood://good")
        await client.read_resource("flood://shapes")  # says flood://good was updated
        await updates.count("flood://good")

    assert caught.value.what == "the subscription to resource 'hang://'"
    assert updates.uris == ["flood://good"]


async def test_subscriptions_made_at_once_are_all_kept(transport: str) -> None:
    uris = [f"note://at-once/{index}" for index in range(8)]
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await asyncio.gather(*(client.subscribe_resource(uri) for uri in uris))
        for uri in uris:
            await client.call_tool("update", {"uri": uri, "text": "changed"})
        for uri in uris:
            await updates.count(uri)

    assert sorted(updates.uris) == sorted(uris)
