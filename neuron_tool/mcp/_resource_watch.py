"""`ResourceWatch`: the one stream a 2026-07-28 session hears of its subscribed resources on.

One stream for every subscribed URI, not one each: each stream holds an HTTP
request open, and a client's connection pool and a server's count of streams
are both bounded. A change of the set opens a stream for the new set and only
then closes the old one, so no update falls between them; the two may both say
one did, which the updates' merging absorbs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

import mcp_types as types
from mcp import Client

from ._listen import Listener

Opener = Callable[[Listener], Awaitable[types.SubscriptionFilter]]
"""Opens a stream under the caller's deadline and error rules: what the server agreed to."""
StreamEnded = Callable[[tuple[str, ...], str], None]
"""Called with the URIs a stream carried and why, when it ends other than by being replaced."""


class ResourceWatch:
    """The stream of updates of a session's subscribed resources, replaced when the set changes.

    `uris` are those the open stream carries, as the server acknowledged them.
    """

    def __init__(self, client: Client, *, on_end: StreamEnded) -> None:
        """No stream yet; `change` opens one."""
        self._client: Final = client
        self._on_end: Final = on_end
        self._listener: Listener | None = None
        self._lock = asyncio.Lock()
        self.uris: frozenset[str] = frozenset()

    async def change(
        self, wanted: Callable[[frozenset[str]], Iterable[str]], open_stream: Opener
    ) -> None:
        """Hear of `wanted(uris)` from now on, on a new stream in place of the current one.

        `wanted` is given the URIs of the current stream as the change is made,
        so that changes made at once each build on the last. An empty set closes
        the stream; the set there is opens none. If opening fails, the current
        stream goes on as it was.
        """
        async with self._lock:
            uris = tuple(dict.fromkeys(wanted(self.uris)))
            if self._listener is not None and frozenset(uris) == self.uris:
                return
            old = self._listener
            if not uris:
                self._listener, self.uris = None, frozenset()
            else:

                def ended(reason: str) -> None:
                    self._ended(listener, reason)

                listener = Listener(self._client, uris=uris, on_end=ended)
                honored = await open_stream(listener)
                taken = frozenset(honored.resource_subscriptions or ()) & frozenset(uris)
                self._listener, self.uris = listener, taken
                if listener.ended:  # between its acknowledgment and now
                    self._ended(listener, "it ended as it opened")
            if old is not None:
                await old.close()

    async def close(self) -> None:
        """Close the stream; nothing more is heard."""
        listener, self._listener, self.uris = self._listener, None, frozenset()
        if listener is not None:
            await listener.close()

    def _ended(self, listener: Listener, reason: str) -> None:
        if listener is not self._listener:
            return  # replaced, or its end already told
        uris, self._listener, self.uris = self.uris, None, frozenset()
        self._on_end(tuple(sorted(uris)), reason)
