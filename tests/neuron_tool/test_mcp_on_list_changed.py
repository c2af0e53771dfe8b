"""`MCPClient(on_list_changed=...)`: each list the server says changed is told to the handler.

Against the real changing server over stdio and loopback HTTP speaking MCP
2026-07-28 (changes on a `subscriptions/listen` stream) and over stdio speaking
2025-11-25 (notices unasked); a flood of notices against the hand-written noisy
peer, which sends them all before it answers the request that asked for them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from typing import Any

import pytest

from neuron_tool.mcp import MCPClient, MCPConnectionError, MCPListChange

from .changes import MODERN, TRANSPORTS, WAIT, changing, names
from .mcp_servers.noisy import NOTICES
from .mcp_servers.paths import script


class Changes:
    """An `on_list_changed` handler that records each change, for a test to wait on."""

    def __init__(self) -> None:
        self.changes: list[MCPListChange] = []
        self._arrived = asyncio.Condition()

    @property
    def kinds(self) -> list[str]:
        """The kinds of the lists told as changed, in the order the handler heard them."""
        return [change.kind for change in self.changes]

    async def __call__(self, change: MCPListChange) -> None:
        async with self._arrived:
            self.changes.append(change)
            self._arrived.notify_all()

    async def count(self, kind: str, times: int = 1) -> None:
        """Wait until the handler has been told `times` times that the list `kind` changed."""
        async with asyncio.timeout(WAIT), self._arrived:
            await self._arrived.wait_for(lambda: self.kinds.count(kind) >= times)


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def noisy(**options: Any) -> MCPClient:
    command, *args = script("noisy")
    return MCPClient.stdio(command, [*args, "flood"], name="noisy", timeout=60.0, **options)


async def test_each_list_the_server_says_changed_is_told_naming_the_server_and_the_list(
    transport: str,
) -> None:
    changes = Changes()
    async with changing(transport, on_list_changed=changes) as client:
        await client.call_tool("add_tool", {"name": "fresh"})
        await changes.count("tools")
        await client.call_tool("add_prompt", {"name": "fresh"})
        await changes.count("prompts")
        await client.call_tool("add_resource", {"uri": "note://added"})
        await changes.count("resources")

    assert changes.changes == [
        MCPListChange("changing", "tools"),
        MCPListChange("changing", "prompts"),
        MCPListChange("changing", "resources"),
    ]


async def test_the_handler_may_list_again_through_the_client_and_sees_the_change(
    transport: str,
) -> None:
    listed: list[list[str]] = []
    done = asyncio.Event()
    connected: list[MCPClient] = []

    async def list_again(change: MCPListChange) -> None:
        (client,) = connected
        listed.append(names(await client.list_tools()))  # the cached listing was dropped
        done.set()

    async with changing(transport, on_list_changed=list_again) as client:
        connected.append(client)
        assert "fresh" not in names(await client.list_tools())
        await client.call_tool("add_tool", {"name": "fresh"})
        async with asyncio.timeout(WAIT):
            await done.wait()

    assert "fresh" in listed[0]


async def test_changes_are_told_without_cache_lists_too(transport: str) -> None:
    changes = Changes()
    async with changing(transport, cache_lists=False, on_list_changed=changes) as client:
        await client.call_tool("add_tool", {"name": "fresh"})
        await changes.count("tools")

    assert changes.kinds == ["tools"]


async def test_a_handler_that_raises_is_logged_naming_the_server_and_the_next_change_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    changes = Changes()

    async def fails_first(change: MCPListChange) -> None:
        if not changes.changes:
            changes.changes.append(change)
            raise RuntimeError("the handler broke")
        await changes(change)

    async with changing("legacy", on_list_changed=fails_first) as client:
        with caplog.at_level(logging.ERROR, logger="neuron_tool.mcp"):
            await client.call_tool("add_tool", {"name": "first"})
            await client.call_tool("add_prompt", {"name": "second"})
            await changes.count("prompts")
        assert await client.call_tool("echo", {"text": "and on"}) == "and on"

    assert changes.kinds == ["tools", "prompts"]
    (failed,) = [r for r in caplog.records if "on_list_changed failed" in r.getMessage()]
    assert failed.getMessage() == "on_list_changed failed for 'tools' of MCP server 'changing'"
    assert failed.exc_info is not None and "the handler broke" in str(failed.exc_info[1])


@pytest.mark.parametrize("transport", ["stdio", "legacy"])
async def test_a_restarted_server_has_each_of_its_lists_told_as_changed(transport: str) -> None:
    changes = Changes()
    async with changing(transport, on_list_changed=changes) as client:
        pid = await client.call_tool("pid", {})
        assert isinstance(pid, str)
        os.kill(int(pid), signal.SIGKILL)
        with pytest.raises(MCPConnectionError):
            await client.call_tool("echo", {"text": "anyone?"})
        assert await client.call_tool("pid", {}) != pid  # restarted
        for kind in ("tools", "prompts", "resources"):
            await changes.count(kind)

    # What changed while it was down went unheard: each list is told once.
    assert sorted(changes.kinds) == ["prompts", "resources", "tools"]


@pytest.mark.parametrize("transport", MODERN)
async def test_when_the_server_ends_the_stream_it_is_reopened_and_each_list_told_once(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    changes = Changes()
    async with changing(transport, on_list_changed=changes) as client:
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("end_streams", {})
            for kind in ("tools", "prompts", "resources"):
                await changes.count(kind)

    # Told once each, as the stream is back: what changed while it was down went unheard.
    assert sorted(changes.kinds) == ["prompts", "resources", "tools"]
    (ended,) = [r.getMessage() for r in caplog.records if "list changes" in r.getMessage()]
    assert ended.endswith(
        "its stream of list changes ended (the server ended it); reopening it in 0.5 s;"
        " until then its lists are not cached; on_list_changed hears of no change"
    )


async def test_a_flood_of_notices_reaches_a_busy_handler_as_one_change_and_never_blocks() -> None:
    heard: list[MCPListChange] = []
    busy_now, release, again = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def busy(change: MCPListChange) -> None:
        heard.append(change)
        if len(heard) == 1:
            busy_now.set()
            await release.wait()
        else:
            again.set()

    async with noisy(on_list_changed=busy) as client:
        await client.read_resource("flood://notices")
        async with asyncio.timeout(WAIT):
            await busy_now.wait()
        # Every notice is taken before the answer, on the one pipe: all of these
        # arrive while the handler is busy with the first change.
        await client.read_resource("flood://notices")
        assert await client.call_tool("anything", {}) == "anything"  # the session goes on
        release.set()
        async with asyncio.timeout(WAIT):
            await again.wait()
        # The handler does not wait, so any change left would have been told by now.
        told = list(heard)

    assert NOTICES > 2
    assert told == [MCPListChange("noisy", "tools")] * 2
