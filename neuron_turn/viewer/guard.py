"""What guards the viewer: a token on every request, the Host header, and read-only methods.

Any local user can reach a loopback port, and any web page can reach it
through the user's browser (DNS rebinding), so, as Jupyter does, every
request needs the token: in the URL the viewer prints (`?token=...`, which
sets a cookie and redirects to the same page without it), in that cookie,
or as `Authorization: Bearer <token>`. The Host header must name the
address served (DNS rebinding sends another), checked before the token.
Only GET and HEAD are answered: the viewer never changes anything.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from http.cookies import SimpleCookie
from typing import Final
from urllib.parse import parse_qsl, quote, urlencode

from starlette.types import ASGIApp, Receive, Scope, Send

from neuron_tool.http_guard import MIN_TOKEN_LENGTH, is_loopback

from .errors import ViewerSetupError

__all__ = ["MIN_TOKEN_LENGTH", "TokenGuard", "allowed_hosts", "check_token", "cookie_name"]


_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS: Final = ("0.0.0.0", "::", "")
_READ_METHODS: Final = frozenset({"GET", "HEAD"})
_PATH_SAFE: Final = "/:@!$&'()*+,;=-._~"
"""What a path keeps unescaped in the redirect: RFC 3986's path characters."""

# Sent with every answer: no script runs (the pages have none), nothing is
# framed, cached or referred elsewhere. Escaping is the first defence against
# hostile model text; this is the second.
SECURITY_HEADERS: Final = (
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
        b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
)


def check_token(token: str) -> None:
    """Refuse a token too short to guess at or that cannot travel in a URL and a cookie.

    Raises:
        ViewerSetupError: shorter than 16 characters, or not URL-safe characters.
    """
    if len(token) < MIN_TOKEN_LENGTH:
        raise ViewerSetupError(
            f"the token must be at least {MIN_TOKEN_LENGTH} characters; "
            "leave it out and one is made"
        )
    if not all(c.isascii() and (c.isalnum() or c in "-_.~") for c in token):
        raise ViewerSetupError("the token may hold only letters, digits and - _ . ~")


def allowed_hosts(host: str, port: int, extra: Sequence[str] = ()) -> frozenset[str]:
    """Return the Host header values accepted for a server bound to `host` and `port`.

    A loopback bind accepts the loopback names; any other address itself;
    `extra` adds names (`name` or `name:port`) a wider bind is reached by.

    Raises:
        ViewerSetupError: `host` is every interface and `extra` names none.
    """
    if host in _WILDCARDS and not extra:
        raise ViewerSetupError(
            f"serving on every interface ({host or 'all'}) needs --allowed-host: the name "
            "browsers reach it by, so that DNS rebinding is refused"
        )
    names = list(_LOOPBACK_NAMES) if is_loopback(host) else []
    if host not in _WILDCARDS:
        names.append(f"[{host}]" if ":" in host else host)
    allowed = {f"{name}:{port}" for name in names}
    allowed.update(_with_port(name.lower(), port) for name in extra)
    return frozenset(allowed)


def _with_port(name: str, port: int) -> str:
    """`name` as a Host header value: `name:port` unless it names its port already."""
    after_address = name.rpartition("]")[2] if name.startswith("[") else name
    return name if ":" in after_address else f"{name}:{port}"


def cookie_name(port: int) -> str:
    """The cookie holding the token: one per port, as browsers share cookies across ports."""
    return f"neuron_ui_{port}"


class TokenGuard:
    """ASGI middleware: the Host check, the token check, read-only methods (see the module doc)."""

    def __init__(self, app: ASGIApp, *, token: str, hosts: frozenset[str], port: int) -> None:
        """Guard `app`: `token` is required, `hosts` are the Host values accepted."""
        self._app = app
        self._token = token.encode()
        self._hosts = hosts
        self._cookie = cookie_name(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer refused requests here; pass the others on."""
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = _headers(scope)
        hosts = [value for key, value in scope["headers"] if key == b"host"]
        if len(hosts) != 1 or headers["host"].lower() not in self._hosts:
            await _refuse(send, 403, "This host name is not served here (DNS rebinding?).")
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query:
            await self._from_url(scope, send, query)
            return
        if not self._authorized(headers):
            await _refuse(
                send, 401, "A token is required: open the URL that `neuron-turn ui` printed."
            )
            return
        if scope["method"] not in _READ_METHODS:
            await _refuse(send, 405, "The viewer only reads.", allow=True)
            return
        await self._app(scope, receive, send)

    async def _from_url(self, scope: Scope, send: Send, query: dict[str, str]) -> None:
        """A token in the URL: if right, keep it in a cookie and show the page without it."""
        if not self._matches(query.pop("token").encode()):
            await _refuse(send, 401, "Wrong token: open the URL that `neuron-turn ui` printed.")
            return
        target = _same_page(scope) + (f"?{urlencode(query)}" if query else "")
        cookie = (
            f"{self._cookie}={self._token.decode()}; Path=/; HttpOnly; SameSite=Strict"
        ).encode()
        headers = [
            (b"location", target.encode()),
            (b"set-cookie", cookie),
            (b"content-length", b"0"),
            *SECURITY_HEADERS,
        ]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    def _authorized(self, headers: dict[str, str]) -> bool:
        scheme, _, credentials = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self._matches(credentials.encode()):
            return True
        cookies: SimpleCookie = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except ValueError:
            return False
        morsel = cookies.get(self._cookie)
        return morsel is not None and self._matches(morsel.value.encode())

    def _matches(self, given: bytes) -> bool:
        # Constant time: how long the answer takes tells nothing of the token.
        return hmac.compare_digest(given, self._token)


def _same_page(scope: Scope) -> str:
    """The path asked for, as sent: where the redirect that drops the token goes.

    Not the decoded path: a `?` or `#` in a session's name would send the
    browser to another page, a line break would make no valid header. One
    leading slash: `//host/...` would name another host.
    """
    raw = scope.get("raw_path")
    path = quote(raw, safe=_PATH_SAFE + "%") if raw else quote(scope["path"], safe=_PATH_SAFE)
    return "/" + path.lstrip("/")


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name; a repeated one keeps its last value."""
    return {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}


async def _refuse(send: Send, status: int, message: str, *, allow: bool = False) -> None:
    body = message.encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS,
    ]
    if allow:
        headers.append((b"allow", b"GET, HEAD"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
