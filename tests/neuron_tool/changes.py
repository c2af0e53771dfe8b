"""Clients of the changing test server over each transport, and waiting for what they hear.

Nothing here sleeps: a test waits on an event or a condition, bounded by `WAIT`
so that a notice that never comes fails the test rather than hanging it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import sys
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any, Final

import pytest

from neuron_tool.mcp import MCPClient, MCPResourceUpdate, MCPTool, StreamBackoff
from neuron_tool.mcp._listings import Listings, ListKind

from .mcp_servers.changing import Changing
from .mcp_servers.paths import script
from .mcp_servers.served import TOKEN, served_over_http

WAIT: Final = 30.0
"""Seconds a test waits for a notice before failing: a bound, never a pause."""
TIMEOUT: Final = 30.0
TRANSPORTS: Final = ("stdio", "legacy", "http")
"""stdio and HTTP speaking MCP 2026-07-28 (change streams), and stdio speaking 2025-11-25."""
MODERN: Final = ("stdio", "http")
_REOPEN: StreamBackoff | None = StreamBackoff()
"""What `changing` clients reopen their streams with unless a test says (`reopen_with`)."""


@asynccontextmanager
async def changing(
    transport: str,
    *,
    quiet: bool = False,
    refuse: bool = False,
    drop: bool = False,
    full: bool = False,
    **options: Any,
) -> AsyncIterator[MCPClient]:
    """A connected client of the changing server over `transport` (one of `TRANSPORTS`).

    `quiet`, `refuse`, `drop` and `full` are the server's modes of those names;
    `options` go to the client, `reopen_streams` by default as `reopen_with` chose.
    """
    options.setdefault("reopen_streams", _REOPEN)
    if transport == "http":
        server = Changing(quiet=quiet, refuse=refuse, drop=drop, full=full).server()
        async with served_over_http(server) as url:
            client = MCPClient.http(url, token=TOKEN, name="changing", timeout=TIMEOUT, **options)
            async with client:
                yield client
        return
    command, *args = script("changing")
    args += ["legacy"] if transport == "legacy" else []
    args += ["quiet"] if quiet else []
    args += ["refuse"] if refuse else []
    args += ["drop"] if drop else []
    args += ["full"] if full else []
    client = MCPClient.stdio(command, args, name="changing", timeout=TIMEOUT, **options)
    async with client:
        yield client


def reopen_with(
    monkeypatch: pytest.MonkeyPatch,
    *,
    first: float = 0.5,
    cap: float = 30.0,
    attempts: int = 10,
    settle: float = math.inf,
) -> StreamBackoff:
    """Have `changing` clients reopen their change streams with this `StreamBackoff` (`cap`: most).

    By default no stream stays open long enough to count as settled: every attempt counts.
    """
    chosen = StreamBackoff(first=first, most=cap, attempts=attempts, settle=settle)
    monkeypatch.setattr(sys.modules[__name__], "_REOPEN", chosen)
    return chosen


async def counts(client: MCPClient) -> dict[str, int]:
    """How many listings and completions of each kind the changing server has answered."""
    answer = await client.call_tool("counts", {})
    assert isinstance(answer, str)
    counted: dict[str, int] = json.loads(answer)
    return counted


async def streams(client: MCPClient) -> dict[str, int]:
    """How many change streams the changing server holds open (`open`) and was asked for."""
    answer = await client.call_tool("streams", {})
    assert isinstance(answer, str)
    held: dict[str, int] = json.loads(answer)
    return held


def names(tools: Iterable[MCPTool]) -> list[str]:
    """The tools' names, sorted."""
    return sorted(tool.name for tool in tools)


class Heard:
    """Events set as clients' listings hear of changes (patched into `Listings`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._changes: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self._unheard = asyncio.Event()
        self._heard = asyncio.Event()
        changed, unheard, heard = Listings.changed, Listings.unheard, Listings.heard

        def on_change(listings: Listings, kind: ListKind) -> None:
            changed(listings, kind)
            self._changes[kind].set()

        def on_unheard(listings: Listings, kinds: Iterable[ListKind]) -> None:
            kinds = list(kinds)
            unheard(listings, kinds)
            if kinds:
                self._unheard.set()

        def on_heard(listings: Listings, kinds: Iterable[ListKind]) -> None:
            kinds = list(kinds)
            heard(listings, kinds)
            if kinds:
                self._heard.set()

        monkeypatch.setattr(Listings, "changed", on_change)
        monkeypatch.setattr(Listings, "unheard", on_unheard)
        monkeypatch.setattr(Listings, "heard", on_heard)

    async def change(self, kind: ListKind) -> None:
        """Wait until a client hears that the list `kind` changed (then forget it)."""
        async with asyncio.timeout(WAIT):
            await self._changes[kind].wait()
        self._changes[kind].clear()

    async def unheard(self) -> None:
        """Wait until a client can no longer hear of a list's changes (then forget it)."""
        async with asyncio.timeout(WAIT):
            await self._unheard.wait()
        self._unheard.clear()

    async def heard(self) -> None:
        """Wait until a client hears of a list's changes again, its stream reopened."""
        async with asyncio.timeout(WAIT):
            await self._heard.wait()
        self._heard.clear()


class Updates:
    """An `on_resource_updated` handler that records each update, for a test to wait on."""

    def __init__(self) -> None:
        self.updates: list[MCPResourceUpdate] = []
        self._arrived = asyncio.Condition()

    @property
    def uris(self) -> list[str]:
        """The URIs updated, in the order the handler heard them."""
        return [update.uri for update in self.updates]

    async def __call__(self, update: MCPResourceUpdate) -> None:
        async with self._arrived:
            self.updates.append(update)
            self._arrived.notify_all()

    async def count(self, uri: str, times: int = 1) -> None:
        """Wait until the handler has heard of `uri` `times` times."""
        async with asyncio.timeout(WAIT), self._arrived:
            await self._arrived.wait_for(lambda: self.uris.count(uri) >= times)


class Said(logging.Handler):
    """The bridge's log, for a test to wait on: lines are emitted in the event loop's thread."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self._lines: list[str] = []
        self._arrived = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self._lines.append(record.getMessage())
        self._arrived.set()

    async def says(self, words: str) -> None:
        """Wait until a line says `words`."""
        async with asyncio.timeout(WAIT):
            while not any(words in line for line in self._lines):
                self._arrived.clear()
                await self._arrived.wait()
