"""What guards `serve_http`: a bearer token on every request, and the Host and Origin checks.

Any local user can reach a loopback port, and a web page can reach it through
the user's browser (DNS rebinding), so the token is required on every bind and
the Host and Origin headers are checked against explicit lists.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Sequence
from typing import Final

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

MIN_TOKEN_LENGTH: Final = 16
"""The shortest token `serve_http` takes; `secrets.token_urlsafe()` makes 43 characters."""
_LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
_WILDCARDS: Final = ("0.0.0.0", "::", "")
# A JSON-RPC error body, so MCP clients show the message rather than "error response".
_UNAUTHORIZED_CODE: Final = -32001


def check_token(token: str) -> None:
    """Refuse a token too short to guess at or that cannot travel in a header.

    Raises:
        ValueError: The token is shorter than 16 characters, or holds spaces or
            control characters.
    """
    if len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(
            f"the token must be at least {MIN_TOKEN_LENGTH} characters;"
            " secrets.token_urlsafe() makes a good one"
        )
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise ValueError("the token must be printable ASCII without spaces, to travel in a header")


def security_settings(
    host: str, allowed_hosts: Sequence[str] | None, allowed_origins: Sequence[str] | None
) -> TransportSecuritySettings:
    """The Host and Origin lists for a server bound to `host`.

    Loopback binds allow the loopback names, any other address itself; a
    wildcard bind (every interface) has no name of its own, so it needs the list.

    Raises:
        ValueError: `host` is a wildcard address and `allowed_hosts` is not given.
    """
    if allowed_hosts is None:
        if host in _WILDCARDS:
            raise ValueError(
                f"serving on every interface (host={host!r}) needs allowed_hosts: the Host"
                " header values clients will send, e.g. ['myhost.example:8000'], so that"
                " DNS rebinding is refused"
            )
        own = f"{_url_host(host)}:*"
        allowed_hosts = _LOOPBACK_HOSTS if own in _LOOPBACK_HOSTS else (own,)
        if is_loopback(host) and own not in _LOOPBACK_HOSTS:
            allowed_hosts = (*_LOOPBACK_HOSTS, own)
    if allowed_origins is None:
        allowed_origins = [f"http://{allowed}" for allowed in allowed_hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(allowed_hosts),
        allowed_origins=list(allowed_origins),
    )


def is_loopback(host: str) -> bool:
    """Whether `host` names the loopback interface."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


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
        values = [value for key, value in scope["headers"] if key == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, credentials = values[0].partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials, self._token)


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
