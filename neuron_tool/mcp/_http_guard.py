"""What guards `serve_http`: a bearer token on every request, and the Host and Origin checks.

Any local user can reach a loopback port, and a web page can reach it through
the user's browser (DNS rebinding), so the token is required on every bind and
the Host and Origin headers are checked against explicit lists.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ..http_guard import allowed_hosts_for, bearer_matches

# A JSON-RPC error body, so MCP clients show the message rather than "error response".
_UNAUTHORIZED_CODE: Final = -32001


def security_settings(
    host: str, allowed_hosts: Sequence[str] | None, allowed_origins: Sequence[str] | None
) -> TransportSecuritySettings:
    """The Host and Origin lists for a server bound to `host` (see `allowed_hosts_for`).

    Raises:
        ValueError: `host` is a wildcard address and `allowed_hosts` is not given.
    """
    hosts = allowed_hosts_for(host, allowed_hosts)
    if allowed_origins is None:
        allowed_origins = [f"http://{allowed}" for allowed in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(hosts),
        allowed_origins=list(allowed_origins),
    )


class BearerAuth:
    """ASGI middleware: HTTP requests without `Authorization: Bearer <token>` get a 401.

    The token is compared in constant time, so the answer's timing tells nothing of it.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        """Guard `app` with `token`."""
        self._app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass authorized HTTP requests (and lifespan events) on; answer others 401."""
        if scope["type"] == "http" and not self._authorized(scope):
            await _unauthorized(send)
            return
        await self._app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        return bearer_matches(scope, self._token)


async def _unauthorized(send: Send) -> None:
    message = "missing or wrong bearer token; send the header 'Authorization: Bearer <token>'"
    error = {"code": _UNAUTHORIZED_CODE, "message": message}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="mcp"'),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
