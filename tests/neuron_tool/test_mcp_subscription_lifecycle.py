"""How a subscription ends: close() or an unsubscribe during its pause, its stream given up.

A `subscribe_resource` waiting to ask again a server that refused it for now
is ended at once by `close()` (raising, saying so, asking nothing more) and by
an unsubscribe of its URI (returning: the later call wins, nothing is left
subscribed and no update of it is heard). A stream of updates the client gives
up reopening ends its subscriptions: each is told as updated once more, and a
restarted server is not asked for them; subscribing again resumes.

Against the real changing server over stdio and loopback HTTP speaking MCP
2026-07-28 and over stdio speaking 2025-11-25 where the eras differ, refusing
subscriptions with the middleware of `test_mcp_subscribe_refusals`. Nothing
here sleeps: tests wait on log lines, updates and tasks, bounded by `WAIT`.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest

from neuron_tool.mcp import MCPClient, MCPConnectionError, MCPSubscriptionClosedError, StreamBackoff
from neuron_tool.mcp.client import Connection
from neuron_tool.mcp.subscriptions import PendingSubscription

from .changes import MODERN, TIMEOUT, TRANSPORTS, WAIT, Said, Updates, changing, streams
from .mcp_servers.changing import Changing
from .mcp_servers.served import TOKEN, served_over_http
from .test_mcp_subscribe_refusals import (
    NOTE,
    OTHER,
    Refuse,
    refuse_with,
    subscribed,
    subscriptions,
)

SLOW = StreamBackoff(first=600.0, most=600.0, attempts=3, settle=math.inf)
"""A pause no test waits out: one cut short, or the test fails at `WAIT`."""
QUICK = StreamBackoff(first=0.001, most=0.002, attempts=2, settle=math.inf)


@pytest.fixture
def refuse(monkeypatch: pytest.MonkeyPatch) -> Refuse:
    """Have `changing` servers of this test refuse the first `times` subscriptions of `uri`."""
    return refuse_with(monkeypatch)


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URIs each attempt of a `subscribe_resource` asked a session for, in order."""
    attempts: list[str] = []
    subscribe = MCPClient._subscribe

    async def counted(
        self: MCPClient, connection: Connection, *, pending: PendingSubscription
    ) -> None:
        attempts.append(pending.uri)
        await subscribe(self, connection, pending=pending)

    monkeypatch.setattr(MCPClient, "_subscribe", counted)
    return attempts


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_close_ends_a_subscribe_waiting_to_ask_again_at_once_saying_the_client_was_closed(
    transport: str, refuse: Refuse, said: Said, asked: list[str]
) -> None:
    refuse(times=1000, code=-32603)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=SLOW) as client:
        tasks = asyncio.all_tasks()
        subscribing = asyncio.create_task(client.subscribe_resource(NOTE))
        await said.says("asking again in 600 s")
        refused = await subscriptions(client)
        await client.close()
        done, _ = await asyncio.wait([subscribing], timeout=WAIT)  # not the pause's 600 s
        left = asyncio.all_tasks() - tasks - {subscribing}

    assert done == {subscribing}
    error = subscribing.exception()
    assert isinstance(error, MCPSubscriptionClosedError)
    assert error.uri == NOTE
    assert str(error).startswith("MCP server 'changing' (")
    assert str(error).endswith(
        f" was closed while the subscription to resource {NOTE!r} waited to be asked again"
        " (refused for now 1 times); nothing is subscribed: after connect(), subscribe again"
    )
    assert refused == (1, 1)
    assert asked == [NOTE]  # no request after the close
    assert left == set()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unsubscribing_during_a_subscribes_pause_wins_and_no_update_of_it_is_heard(
    transport: str, refuse: Refuse, said: Said, asked: list[str]
) -> None:
    refuse(times=1, code=-32603)  # the next request would be taken
    short = StreamBackoff(first=0.5, most=0.5, attempts=3, settle=math.inf)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=short) as client:
        await client.subscribe_resource(OTHER)
        subscribing = asyncio.create_task(client.subscribe_resource(NOTE))
        await said.says("asking again in 0.5 s")
        await client.unsubscribe_resource(NOTE)
        async with asyncio.timeout(WAIT):
            returned = await subscribing
        taken = subscribed(client)
        await client.call_tool("update", {"uri": NOTE, "text": "unheard"})
        await client.call_tool("update", {"uri": OTHER, "text": "heard"})
        await updates.count(OTHER)
        counted = await subscriptions(client)

    assert returned is None
    assert taken == ((OTHER,), frozenset({OTHER}))
    assert asked == [OTHER, NOTE]  # not asked again after the unsubscribe
    assert counted == (1, 1)
    assert updates.uris == [OTHER]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_subscribing_again_after_an_unsubscribe_stopped_a_pause_resumes(
    transport: str, refuse: Refuse, said: Said
) -> None:
    refuse(times=1, code=-32603)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=SLOW) as client:
        subscribing = asyncio.create_task(client.subscribe_resource(NOTE))
        await said.says("asking again in 600 s")
        await client.unsubscribe_resource(NOTE)
        async with asyncio.timeout(WAIT):
            await subscribing
        await client.subscribe_resource(NOTE)  # the later call: taken
        await client.call_tool("update", {"uri": NOTE, "text": "heard"})
        await updates.count(NOTE)
        taken = subscribed(client)

    assert taken == ((NOTE,), frozenset({NOTE}))
    assert updates.uris == [NOTE]


class Held:
    """Holds a subscription request of `uri` before or after the server answers it.

    The first one, or the one after `skip` others of `uri` went through unheld.
    """

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, uri: str, *, after: bool, skip: int = 0
    ) -> None:
        self.reached = asyncio.Event()
        self.go = asyncio.Event()
        self._held = False
        self._seen = 0
        subscribe_on = MCPClient._subscribe_on

        async def held(client: MCPClient, connection: Connection, asked: str) -> None:
            if asked == uri:
                self._seen += 1
            hold = asked == uri and not self._held and self._seen > skip
            self._held = self._held or hold
            if hold and not after:
                await self._hold()
            await subscribe_on(client, connection, asked)
            if hold and after:
                await self._hold()

        monkeypatch.setattr(MCPClient, "_subscribe_on", held)

    async def _hold(self) -> None:
        self.reached.set()
        await self.go.wait()


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("after", [False, True], ids=["before-the-answer", "after-the-answer"])
async def test_unsubscribing_while_the_server_is_asked_wins_over_the_subscribe(
    transport: str, after: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = Held(monkeypatch, NOTE, after=after)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(OTHER)
        subscribing = asyncio.create_task(client.subscribe_resource(NOTE))
        async with asyncio.timeout(WAIT):
            await held.reached.wait()
            await client.unsubscribe_resource(NOTE)
            held.go.set()
            returned = await subscribing
        taken = subscribed(client)
        await client.call_tool("update", {"uri": NOTE, "text": "unheard"})
        await client.call_tool("update", {"uri": OTHER, "text": "heard"})
        await updates.count(OTHER)

    assert returned is None
    assert taken == ((OTHER,), frozenset({OTHER}))
    assert updates.uris == [OTHER]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_subscribe_made_after_an_unsubscribe_is_kept_though_an_earlier_one_was_stopped(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = Held(monkeypatch, NOTE, after=True)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        first = asyncio.create_task(client.subscribe_resource(NOTE))
        async with asyncio.timeout(WAIT):
            await held.reached.wait()
            await client.unsubscribe_resource(NOTE)
            second = asyncio.create_task(client.subscribe_resource(NOTE))
            held.go.set()
            await asyncio.gather(first, second)
        taken = subscribed(client)
        await client.call_tool("update", {"uri": NOTE, "text": "heard"})
        await updates.count(NOTE)

    assert taken == ((NOTE,), frozenset({NOTE}))


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("code", "skip", "backoff"),
    [(-32602, 0, SLOW), (-32603, 1, StreamBackoff(first=0.001, most=0.001, attempts=1))],
    ids=["refused-for-good", "given-up-retrying"],
)
async def test_a_subscribe_unsubscribed_as_it_is_asked_ends_quietly_though_it_then_fails(
    transport: str,
    code: int,
    skip: int,
    backoff: StreamBackoff,
    refuse: Refuse,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refuse(times=1000, code=code)
    held = Held(monkeypatch, NOTE, after=False, skip=skip)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=backoff) as client:
        await client.subscribe_resource(OTHER)
        subscribing = asyncio.create_task(client.subscribe_resource(NOTE))
        async with asyncio.timeout(WAIT):
            await held.reached.wait()
            await client.unsubscribe_resource(NOTE)
            held.go.set()
            returned = await subscribing  # the caller withdrew it: no refusal to hear of
        taken = subscribed(client)
        refused = await subscriptions(client)
        await client.call_tool("update", {"uri": NOTE, "text": "unheard"})
        await client.call_tool("update", {"uri": OTHER, "text": "heard"})
        await updates.count(OTHER)

    assert returned is None
    assert taken == ((OTHER,), frozenset({OTHER}))
    assert refused == (skip + 1, skip + 1)  # it was asked, and refused, all the same
    assert updates.uris == [OTHER]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_close_as_a_subscribe_is_asked_fails_it_as_a_subscription_closed_error(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = Held(monkeypatch, NOTE, after=False)
    async with changing(transport, on_resource_updated=Updates()) as client:
        subscribing = asyncio.create_task(client.subscribe_resource(NOTE))
        async with asyncio.timeout(WAIT):
            await held.reached.wait()
            closing = asyncio.create_task(client.close())
            held.go.set()
            await asyncio.wait([subscribing, closing])
        error = subscribing.exception()

    assert isinstance(error, MCPSubscriptionClosedError)
    assert isinstance(error, MCPConnectionError)  # as any call to a closed client fails
    assert (error.server, error.uri) == ("changing", NOTE)
    assert str(error).endswith(
        f" was closed while the subscription to resource {NOTE!r} was asked;"
        " nothing is subscribed: after connect(), subscribe again"
    )


Restart = Callable[[], Awaitable[None]]


@asynccontextmanager
async def restartable(transport: str, **options: Any) -> AsyncIterator[tuple[MCPClient, Restart]]:
    """A client of the changing server over `transport`, and a way to restart its server."""
    if transport == "stdio":
        async with changing("stdio", **options) as client:

            async def kill() -> None:
                pid = await client.call_tool("pid", {})
                assert isinstance(pid, str)
                os.kill(int(pid), signal.SIGKILL)
                with pytest.raises(MCPConnectionError):
                    await client.call_tool("echo", {"text": "anyone?"})
                assert await client.call_tool("pid", {}) != pid

            yield client, kill
        return
    async with AsyncExitStack() as later:
        first = AsyncExitStack()
        url = await first.enter_async_context(served_over_http(Changing().server()))
        client = MCPClient.http(url, token=TOKEN, name="changing", timeout=TIMEOUT, **options)

        async def serve_anew() -> None:
            await first.aclose()
            with pytest.raises(MCPConnectionError):
                await client.call_tool("echo", {"text": "anyone?"})
            port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
            await later.enter_async_context(served_over_http(Changing().server(), port=port))
            assert await client.call_tool("echo", {"text": "back"}) == "back"

        try:
            await client.connect()
            yield client, serve_anew
        finally:
            await client.close()  # before a server stops: an open stream would hold it up
            await first.aclose()


@pytest.mark.parametrize("transport", MODERN)
@pytest.mark.parametrize(
    ("how", "given_up"),
    [("refuse_streams", {}), ("drop_streams", {"times": 1000})],
    ids=["refused", "failing"],
)
async def test_a_given_up_stream_ends_its_subscriptions_so_a_restarted_server_is_not_asked(
    transport: str, how: str, given_up: dict[str, int], said: Said
) -> None:
    updates = Updates()
    async with restartable(transport, on_resource_updated=updates, reopen_streams=QUICK) as (
        client,
        restart,
    ):
        await client.subscribe_resource(NOTE)
        await client.call_tool(how, given_up)
        await said.says(f"stream of updates of {NOTE!r} is given up")
        await updates.count(NOTE)  # told once more, as it may have changed unseen
        ended = subscribed(client)
        await restart()
        after = subscribed(client)
        held = await streams(client)
        told = list(updates.uris)
        await client.subscribe_resource(NOTE)  # subscribing again resumes
        await client.call_tool("update", {"uri": NOTE, "text": "heard"})
        await updates.count(NOTE, 2)
        resumed = subscribed(client)

    assert ended == after == ((), frozenset())
    assert held["asked"] == 1  # the restarted server's stream of list changes only
    assert told == [NOTE]  # no update for it on the restart
    assert resumed == ((NOTE,), frozenset({NOTE}))
    assert updates.uris == [NOTE, NOTE]
