"""`ResourceWatch`: the one stream a 2026-07-28 session hears of its subscribed resources on.

One stream for every subscribed URI, not one each: each stream holds an HTTP
request open, and a client's connection pool and a server's count of streams
are both bounded. A change of the set opens a stream for the new set and only
then closes the old one, so no update falls between them; the two may both say
one did, which the updates' merging absorbs.

A stream that ends while its session lives is reopened for the same URIs
(`_reopen.Reopener`); until then `uris` still names them, so that a change of
the set builds on them, and a change made meanwhile opens the stream anew
itself. Once a stream is back, `on_back` is told the URIs it carries again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

import mcp_types as types
from mcp import Client

from ._backoff import StreamBackoff
from ._listen import Listener
from ._reopen import Consequences, Reopener

logger = logging.getLogger(__name__)
# How many of a stream's URIs a log line names: a client may subscribe to thousands.
_URIS_SHOWN: Final = 5

Opener = Callable[[Listener], Awaitable[types.SubscriptionFilter]]
"""Opens a stream under the caller's deadline and error rules: what the server agreed to."""
StreamEnded = Callable[[tuple[str, ...]], None]
"""Called with URIs a stream carried, once they are no longer heard of (the log says why)."""


class ResourceWatch:
    """The stream of updates of a session's subscribed resources, replaced when the set changes.

    `uris` are those the stream carries, as the server acknowledged them, or is
    being reopened for.
    """

    def __init__(
        self,
        client: Client,
        *,
        label: str,
        reopen_stream: Opener,
        alive: Callable[[], bool],
        on_back: Callable[[tuple[str, ...]], None],
        on_end: StreamEnded,
        consequences: Consequences,
        backoff: StreamBackoff | None,
    ) -> None:
        """No stream yet; `change` opens one; one that ends is reopened with `backoff`."""
        self._client: Final = client
        self._label: Final = label
        self._reopen_stream: Final = reopen_stream
        self._alive: Final = alive
        self._on_back: Final = on_back
        self._on_end: Final = on_end
        self._listener: Listener | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self.uris: frozenset[str] = frozenset()
        self._reopener: Final = Reopener(
            label=label,
            what=self._what,
            attempt=self._reopen,
            alive=self._reopener_alive,
            on_over=self._over,
            consequences=consequences,
            backoff=backoff,
        )

    async def change(
        self, wanted: Callable[[frozenset[str]], Iterable[str]], open_stream: Opener
    ) -> None:
        """Hear of `wanted(uris)` from now on, on a new stream in place of the current one.

        `wanted` is given the URIs of the current stream as the change is made,
        so that changes made at once each build on the last. An empty set closes
        the stream; the set there is opens none. If opening fails, the current
        stream goes on as it was (or goes on being reopened).
        """
        async with self._lock:
            uris = tuple(dict.fromkeys(wanted(self.uris)))
            if self._listener is not None and frozenset(uris) == self.uris:
                return
            old, was, down = self._listener, self.uris, self._reopener.reopening
            if not uris:
                self._listener, self.uris = None, frozenset()
            else:
                await self._open(uris, open_stream)
            if down and (self._listener is not None or not uris):
                await self._reopener.stop()  # this stream takes the place of the one reopened
                back = tuple(sorted(was & self.uris))
                if back:
                    self._on_back(back)  # down until now: each may have changed unseen
            if old is not None:
                await old.close()

    def failed(self, uris: Iterable[str], how: str) -> None:
        """A stream for `uris` could not be opened (`how`): it is reopened for them.

        For a watch with no stream yet (a new session's); one with a stream, or
        being reopened, goes on as it is. Until the stream is back `uris` names
        them, so that a change of the set builds on them.
        """
        if self._listener is not None or self._reopener.reopening:
            return
        self.uris = frozenset(uris)
        if self.uris:
            self._reopener.ended(how)

    async def close(self) -> None:
        """Close the stream and stop reopening it; nothing more is heard."""
        self._closed = True
        await self._reopener.stop()
        listener, self._listener, self.uris = self._listener, None, frozenset()
        if listener is not None:
            await listener.close()

    async def _open(self, uris: tuple[str, ...], open_stream: Opener) -> None:
        """Make a stream for `uris` the current one; if it ended as it opened, reopen it."""

        def ended(reason: str) -> None:
            self._ended(listener, f"ended ({reason})")

        listener = Listener(self._client, uris=uris, on_end=ended)
        honored = await open_stream(listener)
        if listener.ended:  # between its acknowledgment and now: reopened for all it asked
            self._listener, self.uris = listener, frozenset(uris)
            self._ended(listener, "ended as it opened")
            return
        taken = frozenset(honored.resource_subscriptions or ()) & frozenset(uris)
        self._listener, self.uris = listener, taken

    def _ended(self, listener: Listener, how: str) -> None:
        if listener is not self._listener:
            return  # replaced, or its end already told
        self._listener = None
        if self.uris:
            self._reopener.ended(how)

    async def _reopen(self) -> str | None:
        async with self._lock:
            was = self.uris
            await self._open(tuple(sorted(was)), self._reopen_stream)
            if self._listener is None:
                return "it ended as it opened"
            listener = self._listener
            if not self.uris:
                self._listener = None  # it carries nothing: no use keeping it open
                await listener.close()
        if not self._reopener_alive():
            return None  # being closed: nothing more is told
        if self.uris:
            self._on_back(tuple(sorted(self.uris)))
        dropped = tuple(sorted(was - self.uris))
        if dropped:
            logger.warning(
                "%s: its reopened stream of updates leaves out %s; subscribe again to resume",
                self._label,
                ", ".join(map(repr, dropped)),
            )
            self._on_end(dropped)
        return None

    def _over(self) -> None:
        """Given up: its URIs are no longer heard of."""
        uris, self._listener, self.uris = self.uris, None, frozenset()
        self._on_end(tuple(sorted(uris)))

    def _reopener_alive(self) -> bool:
        return not self._closed and self._alive()

    def _what(self) -> str:
        uris = sorted(self.uris)
        shown = ", ".join(map(repr, uris[:_URIS_SHOWN]))
        more = len(uris) - _URIS_SHOWN
        return f"stream of updates of {shown}" + (f" and {more} more" if more > 0 else "")
