"""`Deliveries`: a server's notices for a handler of the caller's, awaited one at a time.

What `on_resource_updated` and `on_list_changed` share. A notice is a level
trigger ("this changed: look again"), so one for a key already waiting is merged
into it rather than queued, and past `limit` waiting keys the oldest is dropped
(logged at WARNING): a server flooding notices costs bounded memory and a
dictionary update each, however slow the handler. The handler is awaited in a
task of its own, never in the session's, so it may call the client, and a
handler that raises is logged (naming the server) without ending the session or
the notices after it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Final, Generic, TypeVar

logger = logging.getLogger(__name__)

_K = TypeVar("_K", bound=Hashable)
_E = TypeVar("_E")


class Deliveries(Generic[_K, _E]):
    """Keys waiting for `handler`, oldest first, each at most once; a task awaits it with each.

    `event` makes what the handler is given of a key. `what` (say "resource
    updates") and `handler_name` (say "on_resource_updated") are how the log
    names the notices and the handler.
    """

    def __init__(
        self,
        *,
        server: str,
        handler: Callable[[_E], Awaitable[None]],
        event: Callable[[_K], _E],
        limit: int,
        what: str,
        handler_name: str,
    ) -> None:
        """Nothing waiting; the task starts with the first key pushed."""
        self.server: Final = server
        self._handler: Final = handler
        self._event: Final = event
        self._limit: Final = limit
        self._what: Final = what
        self._handler_name: Final = handler_name
        self._waiting: dict[_K, None] = {}  # in order of arrival, oldest first
        self._dropped = 0
        self._task: asyncio.Task[None] | None = None

    def push(self, key: _K) -> None:
        """Have the handler told of `key`: merged with one waiting, and never waited for."""
        self._waiting.pop(key, None)  # merged, and moved to the newest
        if len(self._waiting) >= self._limit:
            del self._waiting[next(iter(self._waiting))]
            self._dropped += 1
            if self._dropped == 1:
                logger.warning(
                    "MCP server %r sends %s faster than %s takes them;"
                    " past %d waiting, the oldest are dropped",
                    self.server,
                    self._what,
                    self._handler_name,
                    self._limit,
                )
        self._waiting[key] = None
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._deliver(), name=f"MCP server {self.server!r} {self._what}"
            )

    def discard(self, key: _K) -> None:
        """Drop a waiting `key`, if one is waiting."""
        self._waiting.pop(key, None)

    async def close(self) -> None:
        """Drop every waiting key and stop the task (cancelling a handler under way)."""
        self._waiting.clear()
        task = self._task
        if task is None or task.done() or task is asyncio.current_task():
            return
        if task.get_loop() is not asyncio.get_running_loop():
            return  # its event loop has ended, and cancelled it
        task.cancel()
        await asyncio.wait([task])

    async def _deliver(self) -> None:
        while self._waiting:
            key = next(iter(self._waiting))
            del self._waiting[key]
            try:
                await self._handler(self._event(key))
            except Exception:
                logger.exception(
                    "%s failed for %r of MCP server %r", self._handler_name, key, self.server
                )
        if self._dropped:
            logger.warning(
                "%d %s of MCP server %r were dropped, newer ones kept",
                self._dropped,
                self._what,
                self.server,
            )
            self._dropped = 0
