"""`Listener`: one change stream of MCP 2026-07-28 (`subscriptions/listen`), held by a task.

From MCP 2026-07-28 on, a server tells of changes (a list changed, a resource
was updated) only on a stream the client opened for them; before, it sent them
unasked. The stream's notices also reach the session's message handler, which
acts on them in both eras alike; the stream's own task only keeps it open and
drained, and says when it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Final

import mcp_types as types
from mcp import Client

from ._describe import describe

Ended = Callable[[str], None]
"""Called with the reason when a stream ends other than by `Listener.close`."""


class Listener:
    """A `subscriptions/listen` stream for what its keywords ask, open until `close`.

    `open` waits for the server's acknowledgment; if the stream ends later
    (the server ended it, or the session was lost), `on_end` is called with
    why, so whatever relied on it can stop relying on it.
    """

    def __init__(
        self,
        client: Client,
        *,
        on_end: Ended,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: Sequence[str] = (),
    ) -> None:
        """Describe the stream; nothing is sent until `open`."""
        self._client: Final = client
        self._on_end: Final = on_end
        self._wanted: Final = (tools, prompts, resources, tuple(uris))
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    async def open(self) -> types.SubscriptionFilter:
        """Open the stream: what the server agreed to send, once it acknowledged it.

        It has no deadline of its own; cancelling the wait stops the stream.

        Raises:
            MCPError: The server refused the stream, or the session ended first.
            SubscriptionLost: The stream ended before it was acknowledged.
        """
        opened: asyncio.Future[types.SubscriptionFilter] = (
            asyncio.get_running_loop().create_future()
        )
        self._task = asyncio.create_task(self._hold(opened), name="MCP subscriptions/listen")
        try:
            return await opened
        except BaseException:
            await self.close()
            raise

    @property
    def ended(self) -> bool:
        """Whether the stream has ended, by `close` or otherwise."""
        return self._task is not None and self._task.done()

    async def close(self) -> None:
        """End the stream (the server is told by the request's cancellation) and its task."""
        self._closing = True
        task = self._task
        if task is None or task.done() or task is asyncio.current_task():
            return
        task.cancel()
        await asyncio.wait([task])

    async def _hold(self, opened: asyncio.Future[types.SubscriptionFilter]) -> None:
        tools, prompts, resources, uris = self._wanted
        try:
            async with self._client.listen(
                tools_list_changed=tools,
                prompts_list_changed=prompts,
                resources_list_changed=resources,
                resource_subscriptions=uris,
            ) as subscription:
                if opened.done():  # the opener gave up waiting
                    return
                opened.set_result(subscription.honored)
                # Drained so that its backlog stays empty; the session's message
                # handler has already acted on each of these.
                async for _event in subscription:
                    pass
            reason = "the server ended it"
        except Exception as exc:
            if not opened.done():
                opened.set_exception(exc)
                return
            reason = describe(exc)
        if not self._closing:
            self._on_end(reason)
