"""A server refusing `subscribe_resource` is judged by the error's code, as a refused stream is.

One that may pass (an internal error such as the MCP SDK's own "Subscription
limit reached", a server error) is asked again on the client's `reopen_streams`
backoff; a final one (invalid params, method not found) raises at once, after
one request, as `MCPSubscriptionFinalError`; one that never passes raises
`MCPSubscriptionGaveUpError` naming how many times it was asked. Whatever fails
leaves the URI unsubscribed and the stream as it was.

Against the real changing server (stdio and loopback HTTP speaking MCP
2026-07-28, stdio speaking 2025-11-25), with a middleware (`Refusing`) that
refuses the first subscriptions of one URI (`resources/subscribe`, or a
`subscriptions/listen` stream carrying it) with a given code. Over stdio the
server runs `serve_refusing` from this module. Nothing here sleeps: tests wait
on log lines and updates, bounded.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import sys
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import pytest
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from neuron_tool.mcp import MCPClient, MCPRequestError, StreamBackoff
from neuron_tool.mcp.errors import (
    MCPSubscriptionFinalError,
    MCPSubscriptionGaveUpError,
    MCPSubscriptionRefusedError,
)

from . import changes
from .changes import MODERN, TRANSPORTS, Said, Updates, changing
from .mcp_servers import changing as changing_server
from .mcp_servers.paths import REPO

NOTE = "note://current"
OTHER = "note://other"
LIMIT = "Subscription limit reached"
"""The MCP SDK's own words for a stream refused as past its limit (`ListenHandler`)."""
QUICK = StreamBackoff(first=0.001, most=0.002, attempts=5, settle=math.inf)
# The stdio server: the changing one, with `Refusing` put in by `serve_refusing`.
_SERVE = (
    f"import sys; sys.path.insert(0, {str(REPO)!r}); "
    "from tests.neuron_tool.test_mcp_subscribe_refusals import serve_refusing; serve_refusing()"
)


class Refusing:
    """Middleware: refuses the first `times` subscriptions of `uri` with `code` and `words`.

    A subscription is `resources/subscribe` of `uri` (the handshake era) or a
    `subscriptions/listen` stream carrying it (MCP 2026-07-28). The server's
    `counts` tool tells how many were asked for (`subscriptions`) and refused.
    """

    def __init__(
        self, counts: Counter[str], *, uri: str, times: int, code: int, words: str
    ) -> None:
        self.counts = counts
        self.uri = uri
        self.times = times
        self.code = code
        self.words = words

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        if self.uri in _subscribed(ctx.method, ctx.params or {}):
            self.counts["subscriptions"] += 1
            if self.counts["refused"] < self.times:
                self.counts["refused"] += 1
                raise MCPError(self.code, self.words)
        return await call_next(ctx)


def _subscribed(method: str, params: Mapping[str, Any]) -> list[str]:
    """The URIs a request asks to be told of."""
    if method == "resources/subscribe":
        return [str(params.get("uri"))]
    if method == "subscriptions/listen":
        return list(params.get("notifications", {}).get("resourceSubscriptions") or ())
    return []


def _refusing_servers(uri: str, times: int, code: int, words: str) -> Callable[..., Server[Any]]:
    """`Changing.server`, with `Refusing` first among its middleware."""
    built = changing_server.Changing.server

    def server(self: changing_server.Changing, *, legacy: bool = False) -> Server[Any]:
        made = built(self, legacy=legacy)
        refusing = Refusing(self.counts, uri=uri, times=times, code=code, words=words)
        made.middleware.insert(0, refusing)
        return made

    return server


def serve_refusing() -> None:
    """The changing server over stdio, refusing: `-c ... URI TIMES CODE WORDS [modes]`."""
    uri, times, code, words, *modes = sys.argv[1:]
    changing_server.Changing.server = _refusing_servers(uri, int(times), int(code), words)  # type: ignore[method-assign]
    sys.argv = [changing_server.__file__, *modes]
    anyio.run(changing_server.main)


Refuse = Callable[..., None]


def refuse_with(monkeypatch: pytest.MonkeyPatch) -> Refuse:
    """What `refuse` gives: for other modules' fixtures of their own."""

    def refusing(times: int, code: int, *, uri: str = NOTE, words: str = LIMIT) -> None:
        monkeypatch.setattr(
            changing_server.Changing, "server", _refusing_servers(uri, times, code, words)
        )
        command = [sys.executable, "-c", _SERVE, uri, str(times), str(code), words]
        monkeypatch.setattr(changes, "script", lambda name: list(command))

    return refusing


@pytest.fixture
def refuse(monkeypatch: pytest.MonkeyPatch) -> Refuse:
    """Have `changing` servers of this test refuse the first `times` subscriptions of `uri`."""
    return refuse_with(monkeypatch)


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


async def subscriptions(client: MCPClient) -> tuple[int, int]:
    """How many subscriptions of the refused URI the server was asked for, and refused."""
    answer = await client.call_tool("counts", {})
    assert isinstance(answer, str)
    counted: dict[str, int] = json.loads(answer)
    return counted.get("subscriptions", 0), counted.get("refused", 0)


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The log's lines on subscriptions refused for now, from the words after the label."""
    lines = [record.getMessage() for record in caplog.records]
    said = "the subscription to resource"
    return [line[line.index(said) :] for line in lines if said in line]


def subscribed(client: MCPClient) -> tuple[tuple[str, ...], frozenset[str]]:
    """What the client takes updates of, and what its session is subscribed to."""
    updates, connection = client._updates, client._connection
    assert updates is not None and connection is not None
    watch = connection.resource_watch
    return updates.subscribed, frozenset(watch.uris if watch is not None else connection.subscribed)


async def test_a_subscription_refused_for_now_is_asked_again_and_its_updates_then_heard(
    transport: str, refuse: Refuse, caplog: pytest.LogCaptureFixture
) -> None:
    refuse(times=2, code=-32603)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=QUICK) as client:
        with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
            await client.subscribe_resource(NOTE)
        asked = await subscriptions(client)
        await client.call_tool("update", {"uri": NOTE, "text": "heard"})
        await updates.count(NOTE)
        taken = subscribed(client)

    assert asked == (3, 2)
    assert updates.uris == [NOTE]
    assert taken == ((NOTE,), frozenset({NOTE}))
    refused = f"the error {LIMIT!r}, code -32603: an internal error, which may pass"
    assert refusals(caplog) == [
        f"the subscription to resource {NOTE!r} was refused for now (asked 1 of at most 4"
        f" times: {refused}); asking again in 0.001 s",
        f"the subscription to resource {NOTE!r} was refused for now (asked 2 of at most 4"
        f" times: {refused}); asking again in 0.002 s",
    ]
    levels = [record.levelno for record in caplog.records if "refused for now" in record.message]
    assert levels == [logging.WARNING, logging.INFO]


@pytest.mark.parametrize(
    ("code", "meaning"),
    [
        (-32602, "invalid params"),
        (-32601, "method not found"),
        (-32002, "resource not found"),
        (-32022, "an unsupported protocol version"),
        (0, "no JSON-RPC code: its handler raised"),  # the MCP SDK's answer when it raised
    ],
)
async def test_a_final_refusal_raises_at_once_after_one_request_saying_asking_again_will_not_do(
    transport: str, code: int, meaning: str, refuse: Refuse, caplog: pytest.LogCaptureFixture
) -> None:
    refuse(times=1000, code=code, words="no such resource here")
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=QUICK) as client:
        with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
            with pytest.raises(MCPSubscriptionFinalError) as refused:
                await client.subscribe_resource(NOTE)
        asked = await subscriptions(client)
        taken = subscribed(client)

    assert asked == (1, 1)
    assert taken == ((), frozenset())
    assert refusals(caplog) == []
    error = refused.value
    assert isinstance(error, MCPRequestError)  # as before: a caller catching that still does
    assert (error.final, error.uri, error.code, error.message) == (
        True,
        NOTE,
        code,
        "no such resource here",
    )
    assert (error.meaning, error.attempts) == (meaning, 1)
    assert str(error) == (
        f"MCP server 'changing' refused the subscription to resource {NOTE!r} with the error"
        f" 'no such resource here', code {code}: {meaning}, which is final: asking again will"
        " not change it, so it was not asked again"
    )


async def test_a_refusal_that_never_passes_raises_naming_the_attempts_and_what_was_said_last(
    transport: str, refuse: Refuse, caplog: pytest.LogCaptureFixture
) -> None:
    refuse(times=1000, code=-32000, words="x" * 10_000)
    backoff = StreamBackoff(first=0.001, most=0.0015, attempts=3, settle=math.inf)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=backoff) as client:
        with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
            with pytest.raises(MCPSubscriptionGaveUpError) as refused:
                await client.subscribe_resource(NOTE)
        asked = await subscriptions(client)

    assert asked == (4, 4)  # the request, then the backoff's three attempts
    error = refused.value
    assert (error.final, error.attempts, error.code, error.meaning) == (
        False,
        4,
        -32000,
        "a server error",
    )
    assert error.message == "x" * 10_000  # the server's own, whole; its words shown cut
    assert error.seconds >= 0.001 + 0.0015 + 0.0015
    shown = f"the error {'x' * 197 + '...'!r}, code -32000: a server error, which may pass"
    assert str(error) == (
        f"MCP server 'changing' refused the subscription to resource {NOTE!r} 4 times over"
        f" {error.seconds:.3g} s (its attempts are spent: at most 3 more on reopen_streams'"
        " pauses), the last time"
        f" with {shown}"
    )
    assert [line.split(" (asked ")[1] for line in refusals(caplog)] == [
        f"1 of at most 4 times: {shown}); asking again in 0.001 s",
        f"2 of at most 4 times: {shown}); asking again in 0.0015 s",
        f"3 of at most 4 times: {shown}); asking again in 0.0015 s",
    ]


async def test_a_subscription_is_asked_again_at_most_three_times_whatever_the_backoff(
    transport: str, refuse: Refuse
) -> None:
    refuse(times=1000, code=-32603)
    backoff = StreamBackoff(first=0.001, most=0.001, attempts=10, settle=math.inf)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=backoff) as client:
        with pytest.raises(MCPSubscriptionGaveUpError) as refused:
            await client.subscribe_resource(NOTE)
        asked = await subscriptions(client)

    assert asked == (4, 4) and refused.value.attempts == 4  # a caller waits: not ten


async def test_with_reopen_streams_none_a_refusal_for_now_is_asked_once(
    transport: str, refuse: Refuse, caplog: pytest.LogCaptureFixture
) -> None:
    refuse(times=1, code=-32603)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=None) as client:
        with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
            with pytest.raises(MCPSubscriptionGaveUpError) as refused:
                await client.subscribe_resource(NOTE)
        await client.subscribe_resource(NOTE)  # the server has room now: asked anew, taken
        asked = await subscriptions(client)

    assert asked == (2, 1)
    assert refusals(caplog) == []
    assert refused.value.attempts == 1
    assert str(refused.value) == (
        f"MCP server 'changing' refused the subscription to resource {NOTE!r} once (this client"
        f" asks nothing again (reopen_streams=None)), the last time with the error {LIMIT!r},"
        " code -32603: an internal error, which may pass"
    )


async def test_a_refused_subscription_leaves_nothing_subscribed_for_a_later_reopening(
    transport: str, refuse: Refuse, said: Said
) -> None:
    refuse(times=1000, code=-32603)
    backoff = StreamBackoff(first=0.001, most=0.001, attempts=2, settle=math.inf)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=backoff) as client:
        await client.subscribe_resource(OTHER)
        before = subscribed(client)
        with pytest.raises(MCPSubscriptionRefusedError):
            await client.subscribe_resource(NOTE)
        after = subscribed(client)
        asked = await subscriptions(client)
        if transport in MODERN:
            await client.call_tool("end_streams", {})
            await said.says("is reopened (attempt 1)")
            await updates.count(OTHER)  # back: it may have changed unseen
        await client.call_tool("update", {"uri": NOTE, "text": "unheard"})
        await client.call_tool("update", {"uri": OTHER, "text": "heard"})
        await updates.count(OTHER, 2 if transport in MODERN else 1)
        reopened = subscribed(client)
        asked_after = await subscriptions(client)

    assert before == after == reopened == ((OTHER,), frozenset({OTHER}))
    assert asked == asked_after == (3, 3)  # the reopened stream did not ask for it
    assert NOTE not in updates.uris


async def test_cancelling_a_subscription_waiting_to_be_asked_again_leaves_nothing_behind(
    transport: str, refuse: Refuse, said: Said
) -> None:
    refuse(times=1000, code=-32603)
    slow = StreamBackoff(first=600.0, most=600.0, attempts=3, settle=math.inf)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=slow) as client:
        await client.subscribe_resource(OTHER)
        before = subscribed(client)
        tasks = asyncio.all_tasks()
        subscribing = asyncio.create_task(client.subscribe_resource(NOTE))
        await said.says("asking again in 600 s")
        subscribing.cancel()
        await asyncio.wait([subscribing])
        left = asyncio.all_tasks() - tasks - {subscribing}
        after = subscribed(client)
        asked = await subscriptions(client)
        await client.call_tool("update", {"uri": NOTE, "text": "unheard"})
        await client.call_tool("update", {"uri": OTHER, "text": "heard"})
        await updates.count(OTHER)

    assert subscribing.cancelled()
    assert left == set()
    assert before == after == ((OTHER,), frozenset({OTHER}))
    assert asked == (1, 1)
    assert updates.uris == [OTHER]


async def test_a_refusal_does_not_drop_the_same_subscription_taken_by_a_call_made_at_once(
    transport: str, refuse: Refuse
) -> None:
    refuse(times=1, code=-32602)  # the first asked is refused for good, the second taken
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=QUICK) as client:
        first, second = await asyncio.gather(
            client.subscribe_resource(NOTE), client.subscribe_resource(NOTE), return_exceptions=True
        )
        taken = subscribed(client)
        await client.call_tool("update", {"uri": NOTE, "text": "heard"})
        await updates.count(NOTE)

    assert isinstance(first, MCPSubscriptionFinalError)
    assert second is None
    assert taken == ((NOTE,), frozenset({NOTE}))
