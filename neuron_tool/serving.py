"""Running a uvicorn server on a bound socket until the caller is cancelled.

The servers we start (the MCP server, the viewer, the A2A server) bind their
socket themselves, so that port 0 works and the URL is known before the first
connection, and stop gracefully when the task serving them is cancelled.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

import uvicorn

__all__ = ["serve_until_cancelled"]


async def serve_until_cancelled(
    server: uvicorn.Server,
    sock: socket.socket,
    url: str,
    on_ready: Callable[[str], object] | None = None,
) -> None:
    """Serve on `sock` (bound and listening) until cancelled, calling `on_ready(url)` first.

    Connections made before uvicorn starts wait in the socket's backlog, so
    `on_ready` is called at once. Responses go out without delay (TCP_NODELAY).
    Cancelling the caller asks uvicorn to exit, waits for it to finish the
    requests in flight, and re-raises.
    """
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        # Accepted connections inherit it (Linux). asyncio sets it on each connection
        # itself only for sockets made with proto IPPROTO_TCP, which
        # `socket.create_server` does not make: without it, every response after a
        # connection's first waited ~40 ms for the client's delayed ACK (Nagle).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        if on_ready is not None:
            on_ready(url)
        await asyncio.shield(task)
    except BaseException:
        server.should_exit = True
        await asyncio.wait([task])
        raise
