"""`Connection`: one session with an MCP server, kept open by a task of its own."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import IO, Final

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client._transport import ReadStream, TransportStreams
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from .endpoint import Endpoint, HttpEndpoint
from .errors import MCPConnectionError, MCPTimeoutError

CLOSED: Final = "it was closed"
"""The `Connection.lost` reason when the session ended because we closed it."""

_TAIL_BYTES: Final = 4096
_TAIL_LINES: Final = 20
# How long a failed request waits for the session to finish winding down, so
# that the reason it ended (and a stdio server's last stderr lines) are known.
_SETTLE_SECONDS: Final = 5.0
# How long a close may wind down before it is cut short. The SDK's stdio
# shutdown is bounded by about 6.5 s (and survives cancellation); an HTTP
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
    """

    def __init__(self, endpoint: Endpoint, *, server: str, label: str) -> None:
        """Prepare a session with `endpoint`; `open` makes and starts one."""
        self.endpoint: Final = endpoint
        self.server: Final = server
        self.label: Final = label
        self.lost: str | None = None
        """Why the session ended, once it has; `None` while it is usable."""
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._stderr: IO[str] | None = None
        self._stderr_tail = ""
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def open(
        cls, endpoint: Endpoint, *, server: str, label: str, timeout: float
    ) -> Connection:
        """Start or reach the server and finish the MCP handshake within `timeout` seconds.

        Raises:
            MCPConnectionError: The server did not start, could not be reached, or
                stopped or misbehaved during the handshake.
            MCPTimeoutError: The handshake took longer than `timeout`.
        """
        connection = cls(endpoint, server=server, label=label)
        await connection._start(timeout)
        return connection

    @property
    def client(self) -> Client:
        """The SDK client, for requests."""
        if self._client is None:
            raise RuntimeError("the connection is not open")
        return self._client

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
            # Whatever went wrong, the owner task must finish (and reap the child) first.
            task.cancel()
            await asyncio.wait([task])
            if isinstance(exc, TimeoutError) and deadline.expired():
                what = "the MCP handshake"
                raise MCPTimeoutError(
                    self.server, what, timeout, stderr=self.stderr_tail()
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
                client = Client(transport, cache=None, client_info=_client_info())
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
        if isinstance(endpoint, HttpEndpoint):
            http_client = create_mcp_http_client(headers=dict(endpoint.headers))
            await stack.enter_async_context(http_client)
            return streamable_http_client(endpoint.url, http_client=http_client)
        # A real file, as the child needs a descriptor; read back with pread, which
        # leaves alone the file offset the child shares.
        stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._stderr = stack.enter_context(stderr)
        # Exit callbacks run last-in first-out: this one runs once the child is
        # reaped and before the file is closed.
        stack.callback(self._keep_stderr_tail)
        env = dict(endpoint.env) if endpoint.env is not None else None
        params = StdioServerParameters(
            command=endpoint.command, args=list(endpoint.args), env=env, cwd=endpoint.cwd
        )
        return _watched(stdio_client(params, errlog=stderr), self._lose)

    def _keep_stderr_tail(self) -> None:
        self._stderr_tail = self.stderr_tail()

    def _lose(self, reason: str) -> None:
        if self.lost is None:
            self.lost = reason
            self._stop.set()


@asynccontextmanager
async def _watched(
    transport: Transport, on_lost: Callable[[str], None]
) -> AsyncIterator[TransportStreams]:
    """Relay a stdio transport's messages, calling `on_lost` when stdout ends or carries garbage.

    The SDK hands the session an unparsable line as an exception and goes on
    waiting, so a server printing garbage would leave requests hanging until
    their timeout; ending the stream instead fails them at once.
    """
    async with transport as (source, write_stream):
        sink, relayed = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(_relay, source, sink, on_lost)
                yield relayed, write_stream
                task_group.cancel_scope.cancel()
        finally:
            sink.close()
            relayed.close()


async def _relay(
    source: ReadStream[SessionMessage | Exception],
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    on_lost: Callable[[str], None],
) -> None:
    with sink:
        try:
            async for item in source:
                if isinstance(item, Exception):
                    on_lost(f"it wrote something that is not JSON-RPC to stdout: {_garbage(item)}")
                    return
                await sink.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return  # the session closed its end: a close, not a loss
    on_lost("its process exited")


def _garbage(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False)
        if errors:
            return repr(errors[0].get("input"))[:200]
    return describe(exc)


def _tail(fd: int) -> str:
    size = os.fstat(fd).st_size
    start = max(0, size - _TAIL_BYTES)
    lines = os.pread(fd, size - start, start).decode("utf-8", "replace").splitlines()
    if start > 0:
        lines = lines[1:]  # most likely cut in the middle
    return "\n".join(lines[-_TAIL_LINES:])


def describe(exc: BaseException) -> str:
    """`Type: message` of the first error in `exc`, looking inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
