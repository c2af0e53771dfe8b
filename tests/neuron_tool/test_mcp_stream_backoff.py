"""How a change stream is reopened is the client's setting (`reopen_streams`), and refusals differ.

A server's error answer to a request for a stream that may pass (the MCP SDK's
own "Subscription limit reached", an internal error) is tried again on that
backoff; a final one (method not found, invalid params) is not. Against the
real changing server over stdio and loopback HTTP speaking MCP 2026-07-28:
`full` and `fill_streams` have the SDK's own `ListenHandler` refuse streams as
past its limit until `make_room`, `refuse_streams(code)` refuses them with any
code. Nothing here sleeps: tests wait on log lines and events, bounded.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import signal
from typing import Any

import pytest

from neuron_tool.mcp import MCPClient, MCPConnectionError, MCPRequestError, StreamBackoff
from neuron_tool.mcp._refusals import stream_refusal

from .changes import MODERN, Heard, Said, Updates, changing, streams
from .mcp_servers.changing import REFUSED
from .test_mcp_listen_reopen import LISTS, NOTE, logged, reopening
from .test_mcp_on_list_changed import Changes

LIMIT = "Subscription limit reached"
"""The MCP SDK's own words for a stream refused as past its limit (`ListenHandler`)."""
QUICK = StreamBackoff(first=0.001, most=0.001, attempts=10_000, settle=math.inf)
"""Tries again at once, for as long as a test may take: the server decides when it opens."""


@pytest.fixture(params=MODERN)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def after_label(lines: list[str]) -> list[str]:
    """The lines without the server's label, which names a port or a path that varies."""
    return [line.split("): ", 1)[1] for line in lines]


def test_the_default_backoff_doubles_from_half_a_second_to_thirty_ten_times() -> None:
    default = MCPClient.stdio("server").reopen_streams
    assert isinstance(default, StreamBackoff)
    pauses = [default.pause(attempt) for attempt in range(default.attempts)]

    assert default == StreamBackoff(first=0.5, most=30.0, attempts=10, settle=30.0)
    assert pauses == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0, 30.0]
    assert default.pause(10_000) == 30.0  # 2.0**10_000 would overflow
    assert StreamBackoff(first=1, most=1, settle=math.inf).pause(3) == 1


@pytest.mark.parametrize(
    ("given", "error", "message"),
    [
        ({"first": -1}, ValueError, "first must be a positive, finite number of seconds, got -1"),
        ({"first": 0}, ValueError, "first must be a positive, finite number of seconds, got 0"),
        (
            {"first": math.nan},
            ValueError,
            "first must be a positive, finite number of seconds, got nan",
        ),
        (
            {"first": math.inf, "most": math.inf},
            ValueError,
            "first must be a positive, finite number of seconds, got inf",
        ),
        (
            {"first": 2.0, "most": 1.0},
            ValueError,
            "most must be a finite number of seconds, at least first (2.0), got 1.0",
        ),
        (
            {"most": math.inf},
            ValueError,
            "most must be a finite number of seconds, at least first (0.5), got inf",
        ),
        (
            {"attempts": 0},
            ValueError,
            "attempts must be at least 1 (MCPClient(reopen_streams=None) reopens nothing), got 0",
        ),
        (
            {"attempts": -3},
            ValueError,
            "attempts must be at least 1 (MCPClient(reopen_streams=None) reopens nothing), got -3",
        ),
        ({"attempts": 2.5}, TypeError, "attempts must be a whole number, got 2.5"),
        ({"attempts": True}, TypeError, "attempts must be a whole number, got True"),
        ({"settle": -0.1}, ValueError, "settle must be a number of seconds, at least 0, got -0.1"),
        (
            {"settle": math.nan},
            ValueError,
            "settle must be a number of seconds, at least 0, got nan",
        ),
        ({"most": "30"}, TypeError, "most must be a number of seconds, got '30'"),
        ({"first": False}, TypeError, "first must be a number of seconds, got False"),
    ],
)
def test_a_bad_backoff_is_refused_naming_its_argument(
    given: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as refused:
        StreamBackoff(**given)

    assert str(refused.value) == f"StreamBackoff: {message}"


def test_a_client_refuses_reopen_streams_that_is_no_backoff() -> None:
    with pytest.raises(TypeError) as refused:
        MCPClient.stdio("server", reopen_streams=30.0)  # type: ignore[arg-type]

    assert str(refused.value) == "reopen_streams must be a StreamBackoff or None, got 30.0"
    assert MCPClient.http("http://127.0.0.1:1/mcp", reopen_streams=None).reopen_streams is None


@pytest.mark.parametrize(
    ("code", "transient", "meaning"),
    [
        (-32601, False, "method not found"),
        (-32602, False, "invalid params"),
        (-32600, False, "an invalid request"),
        (-32700, False, "a parse error"),
        (-32002, False, "resource not found"),
        (-32021, False, "a client capability it requires"),
        (-32022, False, "an unsupported protocol version"),
        (-32099, False, "an error MCP reserves for its own"),
        (-32603, True, "an internal error"),
        (-32001, True, "a timeout"),
        (-32000, True, "a server error"),
        (-32019, True, "a server error"),
        (-32100, True, "a code of the server's own"),
        (429, True, "a code of the server's own"),
    ],
)
def test_a_refusal_is_told_final_or_passing_by_its_code_alone(
    code: int, transient: bool, meaning: str
) -> None:
    # The same words either way: only the code decides.
    refused = stream_refusal(MCPRequestError("s", "the stream", code, LIMIT))

    assert (refused.transient, refused.meaning) == (transient, meaning)
    verdict = "which may pass" if transient else "which is final"
    assert str(refused) == f"the error {LIMIT!r}, code {code}: {meaning}, {verdict}"


def test_a_refusal_quotes_a_long_message_briefly() -> None:
    refused = stream_refusal(MCPRequestError("s", "the stream", -32603, "x" * 1_000_000))

    assert str(refused) == f"the error {'x' * 197 + '...'!r}, code -32603: an internal error," + (
        " which may pass"
    )


async def test_the_sdks_own_limit_is_tried_again_and_the_stream_opens_once_there_is_room(
    transport: str, heard: Heard, said: Said, caplog: pytest.LogCaptureFixture
) -> None:
    changes = Changes()
    with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
        async with changing(
            transport, full=True, on_list_changed=changes, reopen_streams=QUICK
        ) as client:
            await said.says("failed (attempt 2 of 10000")
            await client.call_tool("make_room", {})
            await heard.heard()
            for kind in LISTS:
                await changes.count(kind)
            held = await streams(client)
            still = reopening()

    assert held["open"] == 1
    assert held["asked"] >= 3  # refused on connecting, then at least twice more
    assert still == []
    refused = f"the error {LIMIT!r}, code -32603: an internal error, which may pass"
    first, *_ = after_label(logged(caplog, "stream of list changes"))
    assert first == (
        f"its stream of list changes was refused for now ({refused}); reopening it in 0.001 s;"
        " until then its lists are not cached; on_list_changed hears of no change"
    )
    failed = after_label(logged(caplog, "failed (attempt 1 of"))
    assert failed == [
        "reopening its stream of list changes failed (attempt 1 of 10000: the server refused it"
        f" for now: {refused}); trying again in 0.001 s"
    ]
    assert len(logged(caplog, "is reopened (attempt")) == 1
    assert logged(caplog, "given up") == []


async def test_streams_refused_for_now_as_they_are_reopened_open_once_there_is_room(
    transport: str, heard: Heard, said: Said, caplog: pytest.LogCaptureFixture
) -> None:
    updates = Updates()
    async with changing(transport, on_resource_updated=updates, reopen_streams=QUICK) as client:
        await client.subscribe_resource(NOTE)
        with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
            await client.call_tool("fill_streams", {})
            await said.says("stream of list changes failed (attempt 2 of")
            await said.says(f"stream of updates of {NOTE!r} failed (attempt 2 of")
            await client.call_tool("make_room", {})
            await heard.heard()
            await updates.count(NOTE)  # back: it may have changed unseen
        await client.call_tool("update", {"uri": NOTE, "text": "heard again"})
        await updates.count(NOTE, 2)
        held = await streams(client)

    assert held["open"] == 2
    assert updates.uris == [NOTE, NOTE]
    refused = f"the server refused it for now: the error {LIMIT!r}, code -32603"
    assert len(logged(caplog, refused)) >= 2  # each stream's, at least once
    assert logged(caplog, "given up") == []


async def test_a_backoff_of_three_attempts_gives_up_after_three_each_pause_at_most_most(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    changes = Changes()
    backoff = StreamBackoff(first=0.001, most=0.0015, attempts=3, settle=math.inf)
    with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
        async with changing(
            transport, full=True, on_list_changed=changes, reopen_streams=backoff
        ) as client:
            for kind in LISTS:
                await changes.count(kind)  # given up: each may have changed unseen
            held = await streams(client)
            still = reopening()

    assert held == {"open": 0, "asked": 4}  # on connecting, then three attempts
    assert still == []
    lines = after_label(logged(caplog, "stream of list changes"))
    refused = f"the error {LIMIT!r}, code -32603: an internal error, which may pass"
    assert lines == [
        f"its stream of list changes was refused for now ({refused}); reopening it in 0.001 s;"
        " until then its lists are not cached; on_list_changed hears of no change",
        "reopening its stream of list changes failed (attempt 1 of 3: the server refused it"
        f" for now: {refused}); trying again in 0.0015 s",
        "reopening its stream of list changes failed (attempt 2 of 3: the server refused it"
        f" for now: {refused}); trying again in 0.0015 s",
        "its stream of list changes is given up (it did not reopen in 3 attempts; the last:"
        f" the server refused it for now: {refused}); its lists are not cached any more;"
        " on_list_changed hears of no more changes",
    ]


@pytest.mark.parametrize(
    ("code", "asked", "why"),
    [
        (
            -32602,
            2,
            "the server refused to reopen it: the error {!r}, code -32602: invalid"
            " params, which is final",
        ),
        (
            -32022,
            2,
            "the server refused to reopen it: the error {!r}, code -32022: an"
            " unsupported protocol version, which is final",
        ),
        (
            -32000,
            3,
            "it did not reopen in 2 attempts; the last: the server refused it for"
            " now: the error {!r}, code -32000: a server error, which may pass",
        ),
        (
            7,
            3,
            "it did not reopen in 2 attempts; the last: the server refused it for now:"
            " the error {!r}, code 7: a code of the server's own, which may pass",
        ),
    ],
)
async def test_a_final_refusal_is_never_asked_again_and_one_that_may_pass_is(
    transport: str,
    code: int,
    asked: int,
    why: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    changes = Changes()
    backoff = StreamBackoff(first=0.001, most=0.001, attempts=2, settle=math.inf)
    async with changing(transport, on_list_changed=changes, reopen_streams=backoff) as client:
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("refuse_streams", {"code": code})
            for kind in LISTS:
                await changes.count(kind)
        held = await streams(client)

    assert held == {"open": 0, "asked": asked}  # the first stream, then each attempt
    (over,) = after_label(logged(caplog, "given up"))
    assert over == (
        f"its stream of list changes is given up ({why.format(REFUSED)}); its lists are not"
        " cached any more; on_list_changed hears of no more changes"
    )


async def test_reopen_streams_none_gives_a_stream_up_as_soon_as_it_ends(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    changes = Changes()
    updates = Updates()
    async with changing(
        transport, on_list_changed=changes, on_resource_updated=updates, reopen_streams=None
    ) as client:
        await client.subscribe_resource(NOTE)
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("end_streams", {})
            for kind in LISTS:
                await changes.count(kind)
            await updates.count(NOTE)
        held = await streams(client)
        still = reopening()

    assert held == {"open": 0, "asked": 2}  # never asked again
    assert still == []
    over = sorted(after_label(logged(caplog, "given up")))
    never = "and this client reopens none (reopen_streams=None)"
    assert over == [
        f"its stream of list changes is given up (it ended (the server ended it), {never});"
        " its lists are not cached any more; on_list_changed hears of no more changes",
        f"its stream of updates of {NOTE!r} is given up (it ended (the server ended it),"
        f" {never}); each is told as updated, as it may have changed unseen; subscribe again"
        " to resume",
    ]


async def test_reopen_streams_none_gives_up_a_stream_refused_for_now_as_the_client_connects(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
        async with changing("stdio", full=True, reopen_streams=None) as client:
            held = await streams(client)
            still = reopening()

    assert held == {"open": 0, "asked": 1}
    assert still == []
    (over,) = after_label(logged(caplog, "given up"))
    assert over.startswith(
        f"its stream of list changes is given up (it was refused for now (the error {LIMIT!r},"
        " code -32603: an internal error, which may pass), and this client reopens none"
    )


async def test_a_restarted_server_refusing_for_now_keeps_the_subscriptions_until_there_is_room(
    heard: Heard, said: Said, caplog: pytest.LogCaptureFixture
) -> None:
    updates = Updates()
    # `full` again once restarted: the new session's streams are refused for now too.
    async with changing(
        "stdio", full=True, on_resource_updated=updates, reopen_streams=QUICK
    ) as client:
        await client.call_tool("make_room", {})
        await heard.heard()
        await client.subscribe_resource(NOTE)
        pid = await client.call_tool("pid", {})
        assert isinstance(pid, str)
        os.kill(int(pid), signal.SIGKILL)
        with pytest.raises(MCPConnectionError):
            await client.call_tool("echo", {"text": "anyone?"})
        with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
            assert await client.call_tool("pid", {}) != pid  # restarted, its streams refused
            await said.says(f"stream of updates of {NOTE!r} failed (attempt 1 of")
            told = list(updates.uris)
            await client.call_tool("make_room", {})
            await updates.count(NOTE)  # back: it may have changed unseen
        await client.call_tool("update", {"uri": NOTE, "text": "after the restart"})
        await updates.count(NOTE, 2)
        held = await streams(client)

    assert told == []  # not told before its stream is back
    assert updates.uris == [NOTE, NOTE]
    assert held["open"] == 2
    assert logged(caplog, "dropped the subscription") == []
    (refused,) = after_label(logged(caplog, f"stream of updates of {NOTE!r} was refused"))
    assert refused.startswith(
        f"its stream of updates of {NOTE!r} was refused for now (the error {LIMIT!r}, code"
        " -32603: an internal error, which may pass); reopening it in 0.001 s"
    )


async def test_close_stops_streams_refused_for_now_from_being_tried_again(
    transport: str, said: Said
) -> None:
    async with asyncio.timeout(30):
        async with changing(transport, full=True, reopen_streams=QUICK):
            await said.says("failed (attempt 1 of")
        after = reopening()

    assert after == []
