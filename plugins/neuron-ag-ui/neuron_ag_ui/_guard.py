"""What guards the AG-UI server: the Host and Origin checks, a bearer token, a body size limit.

Any local user can reach a loopback port, and a web page can reach it through
the user's browser (DNS rebinding), so the token is required on every bind and
the Host and Origin headers are checked against explicit lists. The token and
Host rules are those of every server we start (`neuron_tool.http_guard`).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from neuron_tool.http_guard import bearer_matches

_NO_TOKEN: Final = "missing or wrong bearer token; send the header 'Authorization: Bearer <token>'"


def _matches(value: str, patterns: Collection[str]) -> bool:
    """Whether `value` is one of `patterns`, a pattern `"name:*"` standing for any port."""
    if value in patterns:
        return True
    return any(p.endswith(":*") and value.startswith(p[:-1]) for p in patterns)


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """What the guard lets through: one token, some hosts and origins, bodies up to a size."""

    token: str
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    max_body_bytes: int

    def __repr__(self) -> str:
        # The token never reaches a log or a traceback through a repr.
        return (
            f"GuardSettings(token=<hidden>, allowed_hosts={self.allowed_hosts!r},"
            f" allowed_origins={self.allowed_origins!r}, max_body_bytes={self.max_body_bytes})"
        )


class Guard:
    """ASGI middleware: checks Host and Origin, then the bearer token, then the declared size.

    A body sent without a Content-Length is bounded as it is read, by the app.
    """

    def __init__(self, app: ASGIApp, settings: GuardSettings) -> None:
        """Guard `app` as `settings` say."""
        self._app = app
        self._settings = settings
        self._token = settings.token.encode()

    def __repr__(self) -> str:
        return f"Guard({self._settings!r})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass allowed HTTP requests (and lifespan events) on; refuse the others."""
        if scope["type"] == "websocket":
            # AG-UI runs over HTTP here: no websocket gets past, token or not.
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        settings = self._settings
        if not _matches(headers.get("host", ""), settings.allowed_hosts):
            await refuse(send, 421, "this Host header is not served here")
            return
        origin = headers.get("origin")
        if origin is not None and not _matches(origin, settings.allowed_origins):
            await refuse(send, 403, "this Origin is not allowed")
            return
        if not bearer_matches(scope, self._token):
            await refuse(send, 401, _NO_TOKEN, authenticate=True)
            return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > settings.max_body_bytes):
            await refuse(
                send, 413, f"the request body is larger than {settings.max_body_bytes} bytes"
            )
            return
        await self._app(scope, receive, send)


async def refuse(send: Send, status: int, message: str, *, authenticate: bool = False) -> None:
    """Answer `status` with the JSON body `{"error": message}`."""
    body = json.dumps({"error": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if authenticate:
        headers.append((b"www-authenticate", b'Bearer realm="ag-ui"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
