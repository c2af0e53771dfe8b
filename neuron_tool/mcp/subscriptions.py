"""Subscriptions to an MCP server's resources: its word that one changed, to read it again.

`MCPClient.subscribe_resource(uri)` asks the server to tell when the resource at
`uri` changes (MCP `resources/subscribe`, or from MCP 2026-07-28 on a
`subscriptions/listen` stream); each time it does, the client's
`on_resource_updated` handler is awaited with an `MCPResourceUpdate`. An update
carries no content: read the resource again to see what changed.

Updates are level triggers, so they are bounded rather than queued: an update
for a URI already waiting is merged into it, and past `MAX_PENDING_UPDATES`
waiting URIs the oldest is dropped (logged at WARNING), so a server flooding
updates costs bounded memory however slow the handler. The handler is awaited
one update at a time, in a task of its own: it may read the resource through
the client; its failures are logged, never raised into the session. A stream
the server ends is reopened for the same URIs, and each is told as updated once
it is back, as it may have changed unseen. A subscription the server refuses is
judged by the error's code as a refused stream is: asked again on the client's
backoff if it may pass (`MCPSubscriptionGaveUpError` if it never does), raised
at once if final (`MCPSubscriptionFinalError`), and never left half-taken here.
A subscription waiting to be asked again ends at once when the client is closed
(raising `MCPSubscriptionClosedError`) or the URI unsubscribed (returning: the
later call wins); one being asked ends so once its request does, whatever the
server answered (an unsubscribed one's failure is logged, not raised). A stream
given up ends its subscriptions here too: each is told as updated once more, and
a restarted server is not asked for them again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Final, Literal, TypeAlias

from ._deliveries import Deliveries

__all__ = ["MAX_PENDING_UPDATES", "MCPResourceUpdate", "ResourceUpdateHandler"]

MAX_PENDING_UPDATES: Final = 1000
"""How many URIs' updates may wait for the handler; past it, the oldest is dropped."""
# A sub-resource's URI longer than this is not taken: with the cap on waiting
# URIs it bounds what a hostile server can make the client hold.
_MAX_SUBRESOURCE_URI: Final = 8192


@dataclass(frozen=True)
class MCPResourceUpdate:
    """The MCP server `server` said the resource at `uri` changed: read it again to see how.

    `uri` is one the client subscribed to, or a sub-resource of one (a URI
    beginning with it and then a `/`, `?` or `#`, or with it ending in `/`), which
    MCP lets a server name; `note://current-x` is no sub-resource of `note://current`.
    """

    server: str
    uri: str


ResourceUpdateHandler: TypeAlias = Callable[[MCPResourceUpdate], Awaitable[None]]
"""What `MCPClient(on_resource_updated=...)` takes: awaited with each update, one at a time."""


Stopped: TypeAlias = Literal["unsubscribed", "closed"]
"""Why a subscription waiting to be asked again stopped: unsubscribed, or the client closed."""


class PendingSubscription:
    """A `subscribe_resource(uri)` under way, which a later unsubscribe or `close()` stops.

    Its caller pauses on it between requests the server refused for now; a stop
    wakes the pause at once, so the later call wins without waiting the pause out.
    """

    def __init__(self, uri: str) -> None:
        """Under way, not stopped."""
        self.uri: Final = uri
        self.stopped: Stopped | None = None
        """Why it was stopped, once it has been; it then sends nothing more."""
        self._woken = asyncio.Event()

    def stop(self, why: Stopped) -> None:
        """Stop it (the first reason kept), waking a pause under way."""
        if self.stopped is None:
            self.stopped = why
            self._woken.set()

    async def pause(self, seconds: float) -> None:
        """Wait `seconds`, or less if it is stopped meanwhile; no task is made for it."""
        if self.stopped is not None:
            return
        try:
            async with asyncio.timeout(seconds):
                await self._woken.wait()
        except TimeoutError:
            pass  # the pause ran out: ask again


class ResourceUpdates:
    """A client's subscribed URIs, and the updates for them waiting for the handler.

    `push` never waits (it runs as the notice arrives); a task of its own awaits
    the handler with each waiting update, oldest first (`_deliveries.Deliveries`).
    """

    def __init__(
        self, server: str, handler: ResourceUpdateHandler, *, limit: int = MAX_PENDING_UPDATES
    ) -> None:
        """Nothing subscribed, nothing waiting; updates go to `handler`, at most `limit` waiting."""
        self.server: Final = server
        self._subscribed: dict[str, None] = {}
        # URIs whose subscription ended with an update still to hand over: delivered once more.
        self._ending: set[str] = set()
        self._pending: set[PendingSubscription] = set()
        self._handler: Final = handler
        self._deliveries: Final = Deliveries(
            server=server,
            handler=self._hand_over,
            event=partial(MCPResourceUpdate, server),
            limit=limit,
            what="resource updates",
            handler_name="on_resource_updated",
        )

    @property
    def subscribed(self) -> tuple[str, ...]:
        """The subscribed URIs, in the order they were subscribed."""
        return tuple(self._subscribed)

    def add(self, uri: str) -> None:
        """Take updates for `uri` (and its sub-resources) from now on."""
        self._subscribed[uri] = None

    def discard(self, uri: str) -> None:
        """Take no more updates for `uri` or its sub-resources (but as another URI covers them).

        The final update of a subscription that `end` ended is still handed over.
        """
        self._subscribed.pop(uri, None)
        if uri not in self._ending:
            self._deliveries.discard(uri)

    def unsubscribe(self, uri: str) -> None:
        """The caller unsubscribed `uri`: `discard` it, its final update, and stop its subscribes.

        A `subscribe_resource(uri)` waiting to be asked again is stopped, so that
        the later call wins.
        """
        self._ending.discard(uri)
        self.discard(uri)
        self._deliveries.discard(uri)
        for pending in self._pending:
            if pending.uri == uri:
                pending.stop("unsubscribed")

    def end(self, uris: Iterable[str]) -> None:
        """The subscriptions to `uris` ended (their stream was given up): told once more, then none.

        Each may have changed unseen, so the handler is told of it once more; no
        later update is taken, and a restarted server is not asked for it again.
        """
        for uri in uris:
            if uri not in self._subscribed:
                continue  # unsubscribed meanwhile: nothing to tell
            del self._subscribed[uri]
            self._ending.add(uri)
            self._deliveries.push(uri)

    @contextmanager
    def pending(self, uri: str) -> Iterator[PendingSubscription]:
        """A `subscribe_resource(uri)` under way for the block: `unsubscribe` or `close` stop it."""
        pending = PendingSubscription(uri)
        self._pending.add(pending)
        try:
            yield pending
        finally:
            self._pending.discard(pending)

    def push(self, uri: str) -> None:
        """The server said `uri` changed: have the handler told, unless it is none of ours."""
        if self._takes(uri):
            self._deliveries.push(uri)

    async def close(self) -> None:
        """Forget every subscription and waiting update, stop the delivering task and subscribes."""
        self._subscribed.clear()
        self._ending.clear()
        for pending in self._pending:
            pending.stop("closed")
        await self._deliveries.close()

    async def _hand_over(self, update: MCPResourceUpdate) -> None:
        # Asked again as it is handed over: a sub-resource's update may be waiting
        # when the URI it is under is unsubscribed, and `discard` drops only the URI's own.
        uri = update.uri
        if uri in self._ending:
            self._ending.discard(uri)
        elif not self._takes(uri):
            return
        await self._handler(update)

    def _takes(self, uri: str) -> bool:
        if uri in self._subscribed:
            return True
        if len(uri) > _MAX_SUBRESOURCE_URI:
            return False
        return any(_under(uri, subscribed) for subscribed in self._subscribed)


def _under(uri: str, parent: str) -> bool:
    """Whether `uri` names a sub-resource of `parent`: its path, query or fragment goes on."""
    if not uri.startswith(parent) or len(uri) == len(parent):
        return False
    return parent.endswith("/") or uri[len(parent)] in "/?#"
