"""`Connection`: one session with an MCP server, kept open by a task of its own."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from importlib.metadata import PackageNotFoundError, version
from typing import IO, TYPE_CHECKING, Final

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client import Transport
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ._describe import describe
from ._listings import KIND_OF_NOTICE, Listings, ListKind
from ._response_size import body_cap
from ._stdio import GRACE_SECONDS, stdio_transport
from .elicitation import ElicitationHandler, elicitation_callback
from .endpoint import Endpoint, HttpEndpoint
from .errors import MCPConnectionError, MCPConnectTimeoutError
from .sampling import SamplingHandler, sampling_callback

if TYPE_CHECKING:
    from ._list_watch import ListWatch
    from ._resource_watch import ResourceWatch

CLOSED: Final = "it was closed"
"""The `Connection.lost` reason when the session ended because we closed it."""

_TAIL_BYTES: Final = 4096
_TAIL_LINES: Final = 20
# How long a failed request waits for the session to finish winding down, so
# that the reason it ended (and a stdio server's last stderr lines) are known.
_SETTLE_SECONDS: Final = 5.0
# How long a close may wind down before it is cut short. A stdio server's
# stop is bounded by about 6 s (and survives cancellation); an HTTP
# server that stopped answering could otherwise hold the closing DELETE for
# minutes.
_CLOSE_SECONDS: Final = 10.0


def _client_info() -> types.Implementation:
    try:
        return types.Implementation(name="neuron-turn", version=version("neuron-turn"))
    except PackageNotFoundError:
        return types.Implementation(name="neuron-turn", version="0")


class Connection:
    """A connected `mcp.Client`, entered and exited by a background task of its own.

    The SDK's transports run anyio task groups whose cancel scopes belong to the
    task that enters them. Entering them here keeps a transport failure from
    cancelling whichever tool call happens to be running, and lets any task
    open, use and close the session.

    The server's change notices act on the session's `listings` (a changed list
    is listed again) and go to `on_list_changed` (the list's kind) and
    `on_resource_updated` (a resource's URI); the
    streams that carry them from MCP 2026-07-28 on are `list_watch` and
    `resource_watch`, reopened while the session lives and closed with it.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        server: str,
        label: str,
        max_response_bytes: int,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        cache_lists: bool = True,
        on_resource_updated: Callable[[str], None] | None = None,
        on_list_changed: Callable[[ListKind], None] | None = None,
    ) -> None:
        """Prepare a session with `endpoint`; `open` makes and starts one."""
        self.endpoint: Final = endpoint
        self.elicitation: Final = elicitation
        self.sampling: Final = sampling
        self.server: Final = server
        self.label: Final = label
        self.max_response_bytes: Final = max_response_bytes
        # How long a stdio server may take to exit once asked; none for one
        # that never finished the handshake.
        self._grace = GRACE_SECONDS
        self.lost: str | None = None
        """Why the session ended, once it has; `None` while it is usable."""
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._stderr: IO[str] | None = None
        self._stderr_tail = ""
        self._task: asyncio.Task[None] | None = None
        self.listings: Final = Listings(enabled=cache_lists)
        """The session's cached listings."""
        self.list_watch: ListWatch | None = None
        """The stream of list changes (reopened if it ends), on a 2026-07-28 session."""
        self.subscribed: set[str] = set()
        """What a session before 2026-07-28 subscribed to (the server keeps the subscriptions)."""
        self.resource_watch: ResourceWatch | None = None
        """The stream of subscribed resources' updates, on a 2026-07-28 session."""
        self._on_resource_updated: Final = on_resource_updated
        self._on_list_changed: Final = on_list_changed

    @classmethod
    async def open(
        cls,
        endpoint: Endpoint,
        *,
        server: str,
        label: str,
        timeout: float,
        max_response_bytes: int,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        cache_lists: bool = True,
        on_resource_updated: Callable[[str], None] | None = None,
        on_list_changed: Callable[[ListKind], None] | None = None,
    ) -> Connection:
        """Start or reach the server and finish the MCP handshake within `timeout` seconds.

        Raises:
            MCPConnectionError: The server did not start, could not be reached, or
                stopped or misbehaved during the handshake.
            MCPConnectTimeoutError: Starting and the handshake took longer than `timeout`.
        """
        connection = cls(
            endpoint,
            server=server,
            label=label,
            max_response_bytes=max_response_bytes,
            elicitation=elicitation,
            sampling=sampling,
            cache_lists=cache_lists,
            on_resource_updated=on_resource_updated,
            on_list_changed=on_list_changed,
        )
        await connection._start(timeout)
        return connection

    @property
    def client(self) -> Client:
        """The SDK client, for requests."""
        if self._client is None:
            raise RuntimeError("the connection is not open")
        return self._client

    @property
    def modern(self) -> bool:
        """Whether the session speaks MCP 2026-07-28 or later, where changes come on streams."""
        return self.client.protocol_version in MODERN_PROTOCOL_VERSIONS

    def stderr_tail(self) -> str:
        """The last lines a stdio server wrote to its stderr; empty for HTTP servers."""
        if self._stderr is None or self._stderr.closed:
            return self._stderr_tail
        return _tail(self._stderr.fileno())

    async def settle(self) -> None:
        """Wait a little for a lost session to wind down, so `lost` and the stderr are final."""
        if self._task is not None:
            await asyncio.wait([self._task], timeout=_SETTLE_SECONDS)

    async def close(self) -> None:
        """End the session and wait until the server is stopped (a stdio child is reaped)."""
        if self.list_watch is not None:
            await self.list_watch.close()
        if self.resource_watch is not None:
            await self.resource_watch.close()
        self._lose(CLOSED)
        if self._task is None:
            return
        done, _ = await asyncio.wait([self._task], timeout=_CLOSE_SECONDS)
        if not done:
            self._task.cancel()
            await asyncio.wait([self._task])

    async def _start(self, timeout: float) -> None:
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._run(ready), name=f"MCP server {self.server!r}")
        self._task = task
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                self._client = await ready
        except BaseException as exc:
            # Whatever went wrong, the owner task must finish (and reap the child)
            # first; a server that never came up has nothing to finish.
            self._grace = 0.0
            task.cancel()
            await asyncio.wait([task])
            if isinstance(exc, TimeoutError) and deadline.expired():
                raise MCPConnectTimeoutError(
                    self.server, timeout, stderr=self.stderr_tail()
                ) from None
            if not isinstance(exc, Exception):
                raise
            reason = self.lost if self.lost not in (None, CLOSED) else describe(exc)
            message = f"cannot connect to {self.label}: {reason}"
            raise MCPConnectionError(self.server, message, stderr=self.stderr_tail()) from exc

    async def _run(self, ready: asyncio.Future[Client]) -> None:
        try:
            async with AsyncExitStack() as stack:
                transport = await self._transport(stack)
                answers = (
                    None
                    if self.elicitation is None
                    else elicitation_callback(self.server, self.elicitation)
                )
                # Without a handler the SDK declares no sampling and refuses a server that asks.
                samples = (
                    None if self.sampling is None else sampling_callback(self.server, self.sampling)
                )
                client = Client(
                    transport,
                    cache=None,
                    client_info=_client_info(),
                    elicitation_callback=answers,
                    sampling_callback=samples,
                    message_handler=self._received,
                )
                await stack.enter_async_context(client)
                if ready.done():  # the opener gave up while we were connecting
                    return
                ready.set_result(client)
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            self._lose(describe(exc))
        finally:
            self._lose(CLOSED)

    async def _transport(self, stack: AsyncExitStack) -> Transport:
        endpoint = self.endpoint
        limit = self.max_response_bytes
        if isinstance(endpoint, HttpEndpoint):
            http_client = httpx2.AsyncClient(
                headers=dict(endpoint.headers),
                timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
                event_hooks={"response": [body_cap(limit)]},
            )
            await stack.enter_async_context(http_client)
            return streamable_http_client(
                endpoint.url, http_client=http_client, max_sse_event_size=limit
            )
        # A real file, as the child needs a descriptor; read back with pread, which
        # leaves alone the file offset the child shares.
        stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._stderr = stack.enter_context(stderr)
        # Exit callbacks run last-in first-out: this one runs once the child is
        # reaped and before the file is closed.
        stack.callback(self._keep_stderr_tail)
        return stdio_transport(
            endpoint,
            stderr=stderr,
            max_message_bytes=limit,
            on_lost=self._lose,
            grace=lambda: self._grace,
        )

    async def _received(self, message: IncomingMessage) -> None:
        """Act on a server's notice; a transport fault (an `Exception`) fails its request instead.

        It never waits: a server flooding notices costs a dictionary look-up each.
        The SDK's versioned notice classes differ, so they are told apart by method.
        """
        method = getattr(message, "method", None)
        if not isinstance(method, str):
            return
        kind = KIND_OF_NOTICE.get(method)
        if kind is not None:
            self.listings.changed(kind)  # first, so that a handler told of it lists anew
            if self._on_list_changed is not None:
                self._on_list_changed(kind)
        elif method == "notifications/resources/updated" and self._on_resource_updated:
            uri = getattr(getattr(message, "params", None), "uri", None)
            if isinstance(uri, str):
                self._on_resource_updated(uri)

    def _keep_stderr_tail(self) -> None:
        self._stderr_tail = self.stderr_tail()

    def _lose(self, reason: str) -> None:
        if self.lost is None:
            self.lost = reason
            self._stop.set()


def _tail(fd: int) -> str:
    size = os.fstat(fd).st_size
    start = max(0, size - _TAIL_BYTES)
    lines = os.pread(fd, size - start, start).decode("utf-8", "replace").splitlines()
    if start > 0:
        lines = lines[1:]  # most likely cut in the middle
    return "\n".join(lines[-_TAIL_LINES:])
