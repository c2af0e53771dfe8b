"""A change stream (`subscriptions/listen`) the server ends is reopened; one it refuses is not.

Against the real changing server over stdio and loopback HTTP speaking MCP
2026-07-28, which ends its streams (`end_streams`), answers the next ones at once
unacknowledged (`drop_streams`) or refuses them (`refuse_streams`, `refuse`) on
request. The backoff is made small (or huge, to hold a stream down) rather than
waited out: nothing here sleeps.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal

import pytest

from neuron_tool.mcp import MCPClient, MCPConnectionError, MCPListChange, MCPRequestError

from .changes import (
    MODERN,
    TIMEOUT,
    WAIT,
    Heard,
    Said,
    Updates,
    changing,
    counts,
    names,
    reopen_with,
    streams,
)
from .mcp_servers.changing import REFUSED, Changing
from .mcp_servers.served import TOKEN, served_over_http
from .test_mcp_on_list_changed import Changes

NOTE = "note://current"
OTHER = "note://other"
LISTS = ["prompts", "resources", "tools"]


@pytest.fixture(params=MODERN)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def reopening() -> list[str]:
    """The names of the reopening tasks under way in this event loop."""
    return [task.get_name() for task in asyncio.all_tasks() if ": reopen " in task.get_name()]


def logged(caplog: pytest.LogCaptureFixture, words: str) -> list[str]:
    """The bridge's log lines that say `words`, in order."""
    lines = [record.getMessage() for record in caplog.records]
    return [line for line in lines if words in line]


async def test_an_ended_stream_is_reopened_its_lists_told_once_and_cached_again(
    transport: str,
    heard: Heard,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    reopen_with(monkeypatch, first=0.01)
    changes = Changes()
    async with changing(transport, on_list_changed=changes) as client:
        with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
            await client.call_tool("end_streams", {})
            await heard.unheard()
            await heard.heard()
            for kind in LISTS:
                await changes.count(kind)
        await client.list_tools()
        await client.list_tools()
        asked = await counts(client)
        held = await streams(client)
        # The reopened stream carries the lists' changes as the first did.
        await client.call_tool("add_tool", {"name": "fresh"})
        await changes.count("tools", 2)
        assert "fresh" in names(await client.list_tools())

    # Told once each as the stream came back, then the one change it carried.
    assert sorted(changes.kinds[:3]) == LISTS
    assert changes.changes[3:] == [MCPListChange("changing", "tools")]
    assert asked["tools/list"] == 2  # one on connecting, one once it was back: cached again
    assert held == {"open": 1, "asked": 2}
    (back,) = logged(caplog, "is reopened")
    assert back.endswith(
        "its stream of list changes is reopened (attempt 1); its lists are cached again;"
        " on_list_changed is told each changed, as it may have unseen"
    )


async def test_a_stream_broken_by_an_error_after_its_acknowledgment_is_reopened_not_refused(
    transport: str,
    heard: Heard,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    reopen_with(monkeypatch, first=0.001)
    changes = Changes()
    updates = Updates()
    async with changing(transport, on_list_changed=changes, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("break_streams", {})
            await heard.heard()
            await updates.count(NOTE)
            for kind in LISTS:
                await changes.count(kind)
        await client.call_tool("update", {"uri": NOTE, "text": "after the break"})
        await updates.count(NOTE, 2)
        held = await streams(client)

    assert held == {"open": 2, "asked": 4}
    assert sorted(changes.kinds) == LISTS
    ended = logged(caplog, "ended (SubscriptionLost: ")
    assert len(ended) == 2  # the stream of list changes and that of NOTE's updates
    assert all("; reopening it in 0.001 s; until then " in line for line in ended)
    assert logged(caplog, "given up") == []


async def test_resource_subscriptions_are_declared_again_on_the_reopened_stream(
    transport: str, heard: Heard, monkeypatch: pytest.MonkeyPatch
) -> None:
    reopen_with(monkeypatch, first=0.01)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.subscribe_resource(OTHER)
        await client.call_tool("end_streams", {})
        # Each is said to have changed once its stream is back: it may have, unseen.
        await updates.count(NOTE)
        await updates.count(OTHER)
        await heard.heard()  # the stream of list changes, reopened on its own
        await client.call_tool("update", {"uri": OTHER, "text": "after the reopening"})
        await updates.count(OTHER, 2)
        held = await streams(client)

    assert sorted(updates.uris) == [NOTE, OTHER, OTHER]
    # The stream of list changes, that of NOTE, that of both in its place, and the
    # two reopened: one of lists, one of both resources.
    assert held == {"open": 2, "asked": 5}


async def test_a_stream_that_fails_to_open_as_the_client_connects_is_reopened(
    transport: str,
    heard: Heard,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    reopen_with(monkeypatch, first=0.001)
    changes = Changes()
    with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
        async with changing(transport, drop=True, on_list_changed=changes) as client:
            await heard.heard()
            for kind in LISTS:
                await changes.count(kind)
            await client.list_tools()
            before = await counts(client)
            await client.list_tools()
            after = await counts(client)
            held = await streams(client)

    assert held == {"open": 1, "asked": 2}
    assert after["tools/list"] == before["tools/list"]  # cached once the stream is back
    assert sorted(changes.kinds) == LISTS
    (failed,) = logged(caplog, "stream of list changes")
    assert failed.endswith(
        "its stream of list changes ended as it opened; reopening it in 0.001 s; until then"
        " its lists are not cached; on_list_changed hears of no change"
    )


async def test_subscribing_while_the_stream_of_updates_is_down_opens_it_for_all_at_once(
    transport: str, said: Said, monkeypatch: pytest.MonkeyPatch
) -> None:
    reopen_with(monkeypatch, first=3600.0, cap=3600.0)  # reopened by the subscription only
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.call_tool("end_streams", {})
        await said.says(f"stream of updates of {NOTE!r} ended")
        await client.subscribe_resource(OTHER)
        # NOTE's stream is back: it may have changed while it was down.
        await updates.count(NOTE)
        left = reopening()
        await client.call_tool("update", {"uri": NOTE, "text": "heard"})
        await client.call_tool("update", {"uri": OTHER, "text": "heard too"})
        await updates.count(NOTE, 2)
        await updates.count(OTHER)
        held = await streams(client)

    assert len(left) == 1  # the stream of list changes', still paused
    assert sorted(updates.uris) == [NOTE, NOTE, OTHER]
    assert held["open"] == 1  # the stream of both resources; that of list changes is down


async def test_a_subscription_whose_stream_ends_as_it_opens_is_kept_for_the_next_stream(
    transport: str, said: Said, monkeypatch: pytest.MonkeyPatch
) -> None:
    reopen_with(monkeypatch, first=3600.0, cap=3600.0)  # reopened by the subscriptions only
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        await client.call_tool("end_streams", {})
        await said.says(f"stream of updates of {NOTE!r} ended")
        await client.call_tool("drop_streams", {"times": 1})
        await client.subscribe_resource(OTHER)  # its stream ends as it opens
        await client.unsubscribe_resource(NOTE)  # a stream for OTHER alone, which stays
        await updates.count(OTHER)  # back: it may have changed unseen
        left = reopening()
        await client.call_tool("update", {"uri": OTHER, "text": "heard"})
        await updates.count(OTHER, 2)
        await client.call_tool("update", {"uri": NOTE, "text": "unheard"})
        held = await streams(client)

    assert len(left) == 1  # the stream of list changes', still paused
    assert updates.uris == [OTHER, OTHER]
    assert held == {"open": 1, "asked": 4}


async def test_a_server_that_refuses_the_stream_is_asked_once_and_it_is_logged_once(
    transport: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reopen_with(monkeypatch, first=0.001)
    changes = Changes()
    with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
        async with changing(transport, refuse=True, on_list_changed=changes) as client:
            await client.list_tools()
            await client.list_tools()
            asked = await counts(client)
            held = await streams(client)
            still = reopening()

    assert still == []
    assert held == {"open": 0, "asked": 1}
    assert asked["tools/list"] == 3  # connecting's listing and both of these: none cached
    assert changes.changes == []
    (refused,) = logged(caplog, "stream of list changes")
    assert refused.startswith("MCP server 'changing' (")
    assert refused.endswith(
        f"its stream of list changes is refused (the error {REFUSED!r}, code -32601: method"
        " not found, which is final); it is not asked again; its lists are not cached;"
        " on_list_changed hears of no change"
    )


async def test_a_stream_refused_as_it_is_reopened_is_given_up_and_its_lists_told_once(
    transport: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reopen_with(monkeypatch, first=0.001)
    changes = Changes()
    async with changing(transport, on_list_changed=changes) as client:
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("refuse_streams", {})
            for kind in LISTS:
                await changes.count(kind)
        await client.list_tools()
        await client.list_tools()
        asked = await counts(client)
        held = await streams(client)
        still = reopening()

    assert still == []
    assert sorted(changes.kinds) == LISTS
    assert held == {"open": 0, "asked": 2}
    assert asked["tools/list"] == 3
    ended, over = logged(caplog, "stream of list changes")
    assert ended.endswith(
        "its stream of list changes ended (the server ended it); reopening it in 0.001 s;"
        " until then its lists are not cached; on_list_changed hears of no change"
    )
    assert over.endswith(
        "its stream of list changes is given up (the server refused to reopen it: the error"
        f" {REFUSED!r}, code -32601: method not found, which is final); its lists are not"
        " cached any more; on_list_changed hears of no more changes"
    )


async def test_a_refused_stream_of_updates_is_given_up_and_each_resource_said_to_have_changed(
    transport: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reopen_with(monkeypatch, first=0.001)
    updates = Updates()
    async with changing(transport, on_resource_updated=updates) as client:
        await client.subscribe_resource(NOTE)
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("refuse_streams", {})
            await updates.count(NOTE)
        with pytest.raises(MCPRequestError) as again:
            await client.subscribe_resource(NOTE)  # given up: subscribing again asks anew

    assert again.value.message == REFUSED
    assert updates.uris == [NOTE]
    (over,) = logged(caplog, "stream of updates of 'note://current' is given up")
    assert over.endswith(
        "its stream of updates of 'note://current' is given up (the server refused to reopen"
        f" it: the error {REFUSED!r}, code -32601: method not found, which is final); each is"
        " told as updated, as it may have changed unseen; subscribe again to resume"
    )


async def test_a_stream_failing_to_reopen_is_tried_again_after_longer_pauses(
    heard: Heard, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reopen_with(monkeypatch, first=0.001, attempts=5)
    changes = Changes()
    async with changing("stdio", on_list_changed=changes) as client:
        with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
            # Ends the stream, and answers the next two at once, unacknowledged.
            await client.call_tool("drop_streams", {"times": 2})
            await heard.heard()
            for kind in LISTS:
                await changes.count(kind)
        held = await streams(client)

    assert held == {"open": 1, "asked": 4}
    assert sorted(changes.kinds) == LISTS
    failed = logged(caplog, "failed (attempt")
    assert [line.split(": ", 1)[1] for line in failed] == [
        "reopening its stream of list changes failed (attempt 1 of 5: it ended as it opened);"
        " trying again in 0.002 s",
        "reopening its stream of list changes failed (attempt 2 of 5: it ended as it opened);"
        " trying again in 0.004 s",
    ]
    (back,) = logged(caplog, "is reopened")
    assert "is reopened (attempt 3)" in back


async def test_a_stream_that_never_stays_open_is_given_up_after_its_attempts(
    heard: Heard, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reopen_with(monkeypatch, first=0.001, attempts=3)
    changes = Changes()
    async with changing("stdio", on_list_changed=changes) as client:
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("drop_streams", {"times": 1000})
            for kind in LISTS:
                await changes.count(kind)
        await client.list_tools()
        asked = await counts(client)
        held = await streams(client)
        still = reopening()

    assert still == []
    assert held == {"open": 0, "asked": 4}  # the first stream, then three attempts
    assert asked["tools/list"] == 2
    (over,) = logged(caplog, "is given up")
    assert over.endswith(
        "its stream of list changes is given up (it did not reopen in 3 attempts; the last:"
        " it ended as it opened); its lists are not cached any more; on_list_changed hears"
        " of no more changes"
    )


async def test_a_stream_ending_again_soon_after_its_reopening_counts_as_one_more_attempt(
    heard: Heard, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reopen_with(monkeypatch, first=0.001, attempts=1)  # never open long enough to settle
    changes = Changes()
    async with changing("stdio", on_list_changed=changes) as client:
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("end_streams", {})
            await heard.heard()
            await client.call_tool("end_streams", {})
            for kind in LISTS:
                await changes.count(kind, 2)  # once back, once given up
        held = await streams(client)
        still = reopening()

    assert still == []
    assert held == {"open": 0, "asked": 2}
    (over,) = logged(caplog, "is given up")
    assert over.endswith(
        "its stream of list changes is given up (it ended (the server ended it) again too soon"
        " after being reopened, with all 1 attempts spent); its lists are not cached any"
        " more; on_list_changed hears of no more changes"
    )


async def test_a_stream_that_stayed_open_long_enough_has_all_its_attempts_again(
    heard: Heard, monkeypatch: pytest.MonkeyPatch
) -> None:
    reopen_with(monkeypatch, first=0.001, attempts=1, settle=0.0)  # any time open settles it
    async with changing("stdio") as client:
        for _ in range(3):
            await client.call_tool("end_streams", {})
            await heard.heard()
        held = await streams(client)

    assert held == {"open": 1, "asked": 4}


async def test_close_stops_a_reopening_under_way_at_once_and_quietly(
    transport: str, said: Said, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reopen_with(monkeypatch, first=3600.0, cap=3600.0)
    updates = Updates()
    with caplog.at_level(logging.INFO, logger="neuron_tool.mcp"):
        async with asyncio.timeout(WAIT):  # an hour's pause cut short, or the test fails
            async with changing(transport, on_resource_updated=updates) as client:
                await client.subscribe_resource(NOTE)
                await client.call_tool("end_streams", {})
                await said.says("stream of list changes ended")
                await said.says(f"stream of updates of {NOTE!r} ended")
                during = reopening()
                caplog.clear()  # from here, what closing logs
        after = reopening()

    assert len(during) == 2  # each stream waits to be reopened
    assert after == []
    said_then = [r.getMessage() for r in caplog.records]
    assert [line for line in said_then if "stream" in line] == []
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert updates.uris == []


async def test_a_restarted_server_gets_one_stream_not_two(
    heard: Heard, monkeypatch: pytest.MonkeyPatch
) -> None:
    reopen_with(monkeypatch, first=3600.0, cap=3600.0)
    async with changing("stdio") as client:
        await client.call_tool("end_streams", {})
        await heard.unheard()
        pid = await client.call_tool("pid", {})
        assert isinstance(pid, str)
        assert reopening()  # the old session's stream waits to be reopened
        os.kill(int(pid), signal.SIGKILL)
        with pytest.raises(MCPConnectionError):
            await client.call_tool("echo", {"text": "anyone?"})
        assert await client.call_tool("pid", {}) != pid  # restarted
        held = await streams(client)
        still = reopening()

    assert held == {"open": 1, "asked": 1}
    assert still == []  # the old session's reopening ended with it


async def test_a_restarted_http_server_gets_one_stream_not_two(
    heard: Heard, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    backoff = reopen_with(monkeypatch, first=3600.0, cap=3600.0)
    first, second = Changing(), Changing()
    async with served_over_http(first.server()) as url:
        client = MCPClient.http(
            url, token=TOKEN, name="changing", timeout=TIMEOUT, reopen_streams=backoff
        )
        await client.connect()
        await client.call_tool("end_streams", {})
        await heard.unheard()
        waiting = reopening()  # the old session's stream waits to be reopened
    try:
        with pytest.raises(MCPConnectionError):
            await client.call_tool("echo", {"text": "anyone?"})  # stopped
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        async with served_over_http(second.server(), port=port):
            with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
                assert await client.call_tool("echo", {"text": "back"}) == "back"
            held = await streams(client)
            still = reopening()
            await client.close()  # before the server stops: its open stream would hold it up
    finally:
        await client.close()

    assert len(waiting) == 1
    assert (first.gate.asked, held) == (1, {"open": 1, "asked": 1})
    assert still == []  # the old session's reopening ended with it
    (restarted,) = [
        r.getMessage() for r in caplog.records if r.name.startswith("neuron_tool.mcp.client")
    ]
    assert restarted.endswith(
        "stopped (ConnectError: All connection attempts failed); restarting it"
    )
