"""What guards the A2A server: a bearer token, the Host and Origin checks, a body size limit.

Any local user can reach a loopback port, and a web page can reach it through
the user's browser (DNS rebinding), so the token is required on every bind and
the Host and Origin headers are checked against explicit lists. The agent card
alone is public: a client reads it to learn that it needs the token.

The token and Host rules are those of every server we start
(`neuron_tool.http_guard`); the Origin check, the public card and the body limit
are this server's.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from neuron_tool.http_guard import bearer_matches

# JSON-RPC error codes for refusals made before the A2A handler sees the request.
_INVALID_REQUEST_CODE: Final = -32600
_UNAUTHORIZED_CODE: Final = -32001
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
    public_paths: frozenset[str]
    max_body_bytes: int

    def __repr__(self) -> str:
        # The token never reaches a log or a traceback through a repr.
        return (
            f"GuardSettings(token=<hidden>, allowed_hosts={self.allowed_hosts!r},"
            f" allowed_origins={self.allowed_origins!r}, max_body_bytes={self.max_body_bytes})"
        )


class Guard:
    """ASGI middleware: checks Host and Origin, then the bearer token, then the body size.

    Requests for a public path (the agent card) skip the token, never the
    Host and Origin checks. The token is compared in constant time, so the
    answer's timing tells nothing of it.
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
            # A2A has no websocket binding: none gets past, with or without a token.
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        settings = self._settings
        if not _matches(headers.get("host", ""), settings.allowed_hosts):
            await _refuse(send, 421, _INVALID_REQUEST_CODE, "this Host header is not served here")
            return
        origin = headers.get("origin")
        if origin is not None and not _matches(origin, settings.allowed_origins):
            await _refuse(send, 403, _INVALID_REQUEST_CODE, "this Origin is not allowed")
            return
        if scope["path"] not in settings.public_paths and not self._authorized(scope):
            await _refuse(send, 401, _UNAUTHORIZED_CODE, _NO_TOKEN, authenticate=True)
            return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > settings.max_body_bytes):
            await _refuse(send, 413, _INVALID_REQUEST_CODE, self._too_large())
            return
        await self._app(scope, _limited(receive, settings.max_body_bytes), send)

    def _authorized(self, scope: Scope) -> bool:
        return bearer_matches(scope, self._token)

    def _too_large(self) -> str:
        return f"the request body is larger than {self._settings.max_body_bytes} bytes"


def _limited(receive: Receive, limit: int) -> Receive:
    """`receive`, failing once the body read so far passes `limit` bytes.

    For bodies sent without a Content-Length (chunked), which the header check cannot see.
    """
    seen = 0

    async def receive_limited() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                # The JSON-RPC layer answers this one as "Payload too large".
                raise HTTPException(413, f"the request body is larger than {limit} bytes")
        return message

    return receive_limited


async def _refuse(
    send: Send, status: int, code: int, message: str, *, authenticate: bool = False
) -> None:
    # A JSON-RPC error body, so A2A clients show the message rather than "HTTP 401".
    error = {"code": code, "message": message}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if authenticate:
        headers.append((b"www-authenticate", b'Bearer realm="a2a"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
