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
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Final, TypeAlias

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
        """Take no more updates for `uri` or its sub-resources (but as another URI covers them)."""
        self._subscribed.pop(uri, None)
        self._deliveries.discard(uri)

    def push(self, uri: str) -> None:
        """The server said `uri` changed: have the handler told, unless it is none of ours."""
        if self._takes(uri):
            self._deliveries.push(uri)

    async def close(self) -> None:
        """Forget every subscription and waiting update, and stop the delivering task."""
        self._subscribed.clear()
        await self._deliveries.close()

    async def _hand_over(self, update: MCPResourceUpdate) -> None:
        # Asked again as it is handed over: a sub-resource's update may be waiting
        # when the URI it is under is unsubscribed, and `discard` drops only the URI's own.
        if self._takes(update.uri):
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
