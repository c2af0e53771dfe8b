"""`ToolListNotices`: telling a served registry's MCP clients that its tools changed.

A client speaking MCP 2026-07-28 hears of changes on the `subscriptions/listen`
stream it opens (served by the SDK's `ListenHandler` from an in-process bus);
one that opened its session with the `initialize` handshake (2025-11-25 and
before) gets a `notifications/tools/list_changed` notice on its session. A
handshake-era session is known once it has listed or called a tool (one that
has done neither has seen no tools to be wrong about), and forgotten when it
ends.

Changes are level triggers, merged rather than queued: however many come,
and from whatever thread, at most one notice waits to go out, and notices go
out at most once per `gap` seconds, so an upstream server flooding its
changes costs the gateway's clients one notice per gap, not one per change.
A client that cannot be told in time is skipped, and never holds up the
others or the gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, Final

import anyio
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._tool_changes import ToolChanges

logger = logging.getLogger(__name__)

GAP: Final = 0.1
"""Seconds at least between two notices: the changes told meanwhile go out as one."""
SEND_SECONDS: Final = 5.0
"""How long telling one handshake-era client may take before it is skipped."""


class ToolListNotices:
    """Tells the MCP clients of one served registry that its tools changed, while `running`."""

    def __init__(self, *, gap: float = GAP) -> None:
        """Nothing heard yet; `running` starts telling."""
        self.gap: Final = gap
        self._bus: Final = InMemorySubscriptionBus()
        self.listen: Final = ListenHandler(self._bus)
        """Serves `subscriptions/listen`: the stream a 2026-07-28 client hears changes on."""
        self._sessions: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._wanted = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runs = 0
        self._stop: Callable[[], None] = lambda: None

    def seen(self, context: ServerRequestContext[Any]) -> None:
        """Note the session of a request, to tell it of changes if it is of the handshake era."""
        if context.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # told on its stream of changes, if it opened one
        # The SDK hands a handler no public way to its connection: the session's is read.
        connection = getattr(context.session, "_connection", None)
        if not isinstance(connection, Connection) or connection in self._sessions:
            return
        self._sessions.add(connection)
        connection.exit_stack.callback(self._sessions.discard, connection)

    def changed(self) -> None:
        """The registry's tools changed: tell its clients soon (any thread may say so)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # not serving: no client to tell
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            self._wanted.set()
        else:
            loop.call_soon_threadsafe(self._wanted.set)

    @contextlib.asynccontextmanager
    async def running(self, changes: Iterable[ToolChanges]) -> AsyncIterator[None]:
        """Tell clients of each change `changes` say, until the block ends.

        Entered again while running (a server run twice at once), it shares the first
        run's telling; the last to end stops it, and ends the clients' streams of changes.
        """
        self._runs += 1
        if self._runs == 1:
            self._start(changes)
        try:
            yield
        finally:
            self._runs -= 1
            if self._runs == 0:
                self.stop()

    def stop(self) -> None:
        """Stop telling and end every stream of changes, so no client holds the server open."""
        self._stop()
        self._stop = lambda: None
        self._loop = None
        self.listen.close()

    def _start(self, changes: Iterable[ToolChanges]) -> None:
        self._loop = asyncio.get_running_loop()
        self._wanted = asyncio.Event()
        stops = [source.listen(self.changed) for source in changes]
        task = asyncio.create_task(self._telling(), name="MCP tool list notices")

        def stop() -> None:
            for stop_listening in stops:
                stop_listening()
            task.cancel()

        self._stop = stop

    async def _telling(self) -> None:
        while True:
            await self._wanted.wait()
            self._wanted.clear()
            await self._tell_all()
            await asyncio.sleep(self.gap)  # what changes meanwhile goes out as one notice

    async def _tell_all(self) -> None:
        await self._bus.publish(ToolsListChanged())
        sessions = list(self._sessions)
        if sessions:
            await asyncio.gather(*(_tell(session) for session in sessions))


async def _tell(session: Connection) -> None:
    """Send `session` a notice that the tools changed; one not told in time is skipped."""
    try:
        async with asyncio.timeout(SEND_SECONDS):
            await session.send_tool_list_changed()
    except (TimeoutError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
        logger.debug("an MCP client was not told its tools changed: %r", exc)
