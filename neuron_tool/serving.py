"""Running a uvicorn server on a bound socket until the caller is cancelled.

The servers we start (the MCP server, the viewer, the A2A and AG-UI servers)
bind their socket themselves, so that port 0 works and the URL is known before
the first connection, and stop gracefully when the task serving them is
cancelled. `serve_asgi` is all of it for a server asking for a bearer token.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import sys
from collections.abc import Callable
from typing import Final

import uvicorn
from starlette.types import ASGIApp

from .http_guard import check_token, url_host

__all__ = ["error_text", "serve_asgi", "serve_until_cancelled", "server_token"]

_GRACEFUL_SHUTDOWN_SECONDS: Final = 2
_ERROR_CHARS: Final = 2000
"""How long requests in flight may take to finish once the server is asked to stop."""


def server_token(token: str | None) -> tuple[str, bool]:
    """The token a server asks for: `token`, checked, or a new one (then True: show it).

    Raises:
        ValueError: `token` is too short or not header-safe (`check_token`).
    """
    if token is None:
        return secrets.token_urlsafe(32), True
    check_token(token)
    return token, False


async def serve_asgi(
    app_for: Callable[[str], ASGIApp],
    *,
    host: str,
    port: int,
    what: str,
    token: str,
    show_token: bool,
    path: str = "",
    on_ready: Callable[[str], object] | None = None,
    on_stop: Callable[[], object] | None = None,
) -> None:
    """Serve `app_for(base_url)` on `host`:`port` until cancelled.

    The socket is bound first (port 0 picks a free one), so the base URL is
    known before the app is made (an A2A card names it). With `show_token`
    (the server made it), "serving <what> at <url>" and the header to send go
    to stderr. `on_ready` gets the base URL and `path`; `on_stop` is called
    as the server is asked to stop (`serve_until_cancelled`).
    """
    # Binding here rather than in uvicorn lets port 0 work: the URL is known
    # now, and connections queue in the backlog until uvicorn takes them.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.create_server((host, port), family=family) as sock:
        base = f"http://{url_host(host)}:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            app_for(base),
            log_config=None,
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS,
        )
        server = uvicorn.Server(config)
        url = base + path
        if show_token:
            print(
                f"serving {what} at {url}; clients send 'Authorization: Bearer {token}'",
                file=sys.stderr,
            )
        await serve_until_cancelled(server, sock, url, on_ready, on_stop)


async def serve_until_cancelled(
    server: uvicorn.Server,
    sock: socket.socket,
    url: str,
    on_ready: Callable[[str], object] | None = None,
    on_stop: Callable[[], object] | None = None,
) -> None:
    """Serve on `sock` (bound and listening) until cancelled, calling `on_ready(url)` first.

    Connections made before uvicorn starts wait in the socket's backlog, so
    `on_ready` is called at once. Responses go out without delay (TCP_NODELAY).
    Cancelling the caller calls `on_stop()` (to end responses that would
    otherwise last as long as their clients), asks uvicorn to exit, waits for
    it to finish the requests in flight, and re-raises.
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
        if on_stop is not None:
            on_stop()
        server.should_exit = True
        await asyncio.wait([task])
        raise


def error_text(exc: BaseException, limit: int = _ERROR_CHARS) -> str:
    """`Type: message` of `exc` and of each error that caused it, cut at `limit`; no traceback.

    Why: what a server tells its remote client of a failed turn names the
    error and its causes, never a traceback or anything of the server's code.
    """
    seen: list[str] = []
    current: BaseException | None = exc
    for _ in range(4):
        if current is None:
            break
        while isinstance(current, BaseExceptionGroup) and current.exceptions:
            current = current.exceptions[0]
        text = str(current).strip()
        said = f"{type(current).__name__}: {text}" if text else type(current).__name__
        # An orchestrator's error often quotes its cause already: say it once.
        if not any(said in earlier for earlier in seen):
            seen.append(said)
        current = current.__cause__
    joined = "; caused by ".join(seen)
    return joined if len(joined) <= limit else joined[:limit] + "…"
