"""`serve_viewer`: the viewer on a local port, behind its token, until cancelled."""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable, Sequence
from typing import Final

import uvicorn

from layer0 import TurnRecordReader
from neuron_tool.http_guard import url_host
from neuron_tool.serving import serve_until_cancelled

from .app import viewer_app
from .errors import ViewerSetupError
from .guard import TokenGuard, allowed_hosts, check_token

__all__ = ["serve_viewer"]

_GRACEFUL_SHUTDOWN_SECONDS: Final = 2


async def serve_viewer(
    records: TurnRecordReader,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    extra_hosts: Sequence[str] = (),
    where: str = "",
    on_ready: Callable[[str], object] | None = None,
) -> None:
    """Serve the viewer of `records` at `http://host:port/` until cancelled.

    Why: a turn that misbehaved is easier to look at than to read about.
    Every request needs the token (see `neuron_turn.viewer.guard`), on
    loopback too. `on_ready` gets the URL to open, token included, once
    connections are accepted. It binds the loopback interface unless told
    otherwise; a wider bind needs `extra_hosts`, the names it is reached by.

    Args:
        records: what to show; give it a read-only store.
        host: the address to bind.
        port: the port; 0 picks a free one.
        token: the token (16+ URL-safe characters); None makes one.
        extra_hosts: Host header values accepted besides the bound address.
        where: what the pages name as their source (the state file).
        on_ready: called with the URL (`http://host:port/?token=...`).

    Raises:
        ViewerSetupError: a bad token, a wide bind without `extra_hosts`, or
            the address cannot be bound (in use, not this machine's).
    """
    if token is None:
        token = secrets.token_urlsafe(32)
    check_token(token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family)
    except OSError as exc:
        raise ViewerSetupError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    with sock:
        bound = sock.getsockname()[1]
        hosts = allowed_hosts(host, bound, extra_hosts)
        app = TokenGuard(viewer_app(records, where=where), token=token, hosts=hosts, port=bound)
        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS,
        )
        server = uvicorn.Server(config)
        url = f"http://{url_host(host)}:{bound}/?token={token}"
        # The socket is bound and listening: connections queue until uvicorn takes them.
        await serve_until_cancelled(server, sock, url, on_ready)
