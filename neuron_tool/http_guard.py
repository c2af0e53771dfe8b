"""What every server we start checks before anything else: its bearer token and Host names.

Any local user can reach a loopback port, and a web page can reach it through
the user's browser (DNS rebinding), so the servers we start (the MCP server,
the A2A and AG-UI servers) ask for a token on every bind and accept only the
Host header values of an explicit list. These are the rules they share, and
`RequestGuard`, the ASGI middleware applying them with an Origin list and a
body limit; each server says a refusal in its own protocol's words.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "LOOPBACK_HOSTS",
    "MIN_TOKEN_LENGTH",
    "GuardRules",
    "Refuse",
    "RequestGuard",
    "allowed_hosts_for",
    "bearer_matches",
    "check_token",
    "host_matches",
    "is_loopback",
    "json_refusal",
    "url_host",
]

MIN_TOKEN_LENGTH: Final = 16
"""The shortest token a server takes; `secrets.token_urlsafe(32)` makes 43 characters."""
LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
"""The Host header values of a loopback bind, `name:*` standing for any port."""
_WILDCARDS: Final = ("0.0.0.0", "::", "")


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


def bearer_matches(scope: Scope, token: bytes) -> bool:
    """Whether the request of `scope` carries one `Authorization: Bearer <token>` header.

    Compared in constant time, so the answer's timing tells nothing of the token.
    """
    values = [value for key, value in scope["headers"] if key == b"authorization"]
    if len(values) != 1:
        return False
    scheme, _, credentials = values[0].partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(credentials, token)


def allowed_hosts_for(host: str, allowed_hosts: Sequence[str] | None) -> tuple[str, ...]:
    """The Host header values accepted by a server bound to `host` (`allowed_hosts` if given).

    Loopback binds allow the loopback names, any other address itself; a
    wildcard bind (every interface) has no name of its own, so it needs the list.

    Raises:
        ValueError: `host` is a wildcard address and `allowed_hosts` is not given.
    """
    if allowed_hosts is not None:
        return tuple(allowed_hosts)
    if host in _WILDCARDS:
        raise ValueError(
            f"serving on every interface (host={host!r}) needs allowed_hosts: the Host"
            " header values clients will send, e.g. ['myhost.example:8000'], so that"
            " DNS rebinding is refused"
        )
    own = f"{url_host(host)}:*"
    if own in LOOPBACK_HOSTS:
        return LOOPBACK_HOSTS
    return (*LOOPBACK_HOSTS, own) if is_loopback(host) else (own,)


def is_loopback(host: str) -> bool:
    """Whether `host` names the loopback interface."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """`host` as it stands in a URL: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def host_matches(value: str, patterns: Collection[str]) -> bool:
    """Whether `value` (a Host or Origin header) is one of `patterns`, `"name:*"` any port."""
    if value in patterns:
        return True
    return any(p.endswith(":*") and value.startswith(p[:-1]) for p in patterns)


_NO_TOKEN: Final = "missing or wrong bearer token; send the header 'Authorization: Bearer <token>'"


class Refuse(Protocol):
    """Answers a refused request: its status and message, in the server's protocol's words."""

    def __call__(
        self, send: Send, status: int, message: str, *, authenticate: bool = False
    ) -> Awaitable[None]:
        """Send the response; `authenticate` asks for a `WWW-Authenticate` header (a 401)."""
        ...


def json_refusal(realm: str, body: Callable[[int, str], object] | None = None) -> Refuse:
    """A `Refuse` answering with a JSON body: `{"error": message}`, or `body(status, message)`.

    Why: each server says a refusal in its protocol's words (a JSON-RPC error
    for A2A) but sends it alike; a 401 names `realm` in its `WWW-Authenticate`.
    """
    challenge = f'Bearer realm="{realm}"'.encode()

    async def refuse(send: Send, status: int, message: str, *, authenticate: bool = False) -> None:
        payload = {"error": message} if body is None else body(status, message)
        data = json.dumps(payload).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
        ]
        if authenticate:
            headers.append((b"www-authenticate", challenge))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    return refuse


@dataclass(frozen=True, slots=True)
class GuardRules:
    """What a `RequestGuard` lets through: one token, some hosts and origins, bodies to a size."""

    token: str = field(repr=False)  # never in a log or a traceback through a repr
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    max_body_bytes: int
    public_paths: frozenset[str] = frozenset()
    """Paths served without the token (an A2A agent card), never without the other checks."""

    @classmethod
    def serving(
        cls,
        token: str,
        allowed_hosts: Sequence[str],
        allowed_origins: Sequence[str] | None,
        max_body_bytes: int,
        public_paths: Collection[str] = (),
    ) -> GuardRules:
        """The rules of a server answering `allowed_hosts`, by the token, on bodies to a size.

        `allowed_origins` None allows the pages those hosts serve themselves
        (`http://<host>`), and no other.
        """
        origins = (
            [f"http://{host}" for host in allowed_hosts]
            if allowed_origins is None
            else allowed_origins
        )
        return cls(
            token, tuple(allowed_hosts), tuple(origins), max_body_bytes, frozenset(public_paths)
        )


class RequestGuard:
    """ASGI middleware: Host and Origin first, then the bearer token, then the body's size.

    A websocket is closed (none of our servers takes one); lifespan events
    pass. The token is compared in constant time. A declared body past the
    limit is refused at once; with `overflow`, a body sent without a length
    (chunked) is counted as the app reads it, and `overflow(limit)` is raised
    past it (an app that bounds its reads itself passes None).

    A page of an allowed origin may call the server from a browser (CORS): its
    preflight (`OPTIONS` with `Access-Control-Request-Method`, which a browser
    sends without credentials) is answered without the token, and the answers
    to its requests name its origin; the requests themselves still need the
    token. A page of any other origin is refused before anything runs.
    """

    def __init__(
        self,
        app: ASGIApp,
        rules: GuardRules,
        refuse: Refuse,
        *,
        overflow: Callable[[int], BaseException] | None = None,
    ) -> None:
        """Guard `app` by `rules`, answering refusals with `refuse`."""
        self._app = app
        self._rules = rules
        self._refuse = refuse
        self._overflow = overflow
        self._token = rules.token.encode()

    def __repr__(self) -> str:
        return f"RequestGuard({self._rules!r})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass allowed HTTP requests (and lifespan events) on; refuse the others."""
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        refused = self._refusal(scope)
        origin = Headers(scope=scope).get("origin")
        if origin is not None and (refused is None or refused[0] not in (403, 421)):
            # An allowed page: it may read the answer, a refusal included.
            if refused is None and _is_preflight(scope):
                await _allow_preflight(send, origin)
                return
            send = _naming_origin(send, origin)
        if refused is not None:
            status, message = refused
            await self._refuse(send, status, message, authenticate=status == 401)
            return
        limit, overflow = self._rules.max_body_bytes, self._overflow
        await self._app(
            scope, receive if overflow is None else _limited(receive, limit, overflow), send
        )

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers = Headers(scope=scope)
        rules = self._rules
        if not host_matches(headers.get("host", ""), rules.allowed_hosts):
            return 421, "this Host header is not served here"
        origin = headers.get("origin")
        if origin is not None and not host_matches(origin, rules.allowed_origins):
            return 403, "this Origin is not allowed"
        public = scope["path"] in rules.public_paths or (
            origin is not None and _is_preflight(scope)
        )
        if not public and not bearer_matches(scope, self._token):
            return 401, _NO_TOKEN
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > rules.max_body_bytes):
            return 413, f"the request body is larger than {rules.max_body_bytes} bytes"
        return None


_PREFLIGHT_HEADERS: Final = [
    (b"access-control-allow-methods", b"GET, POST"),
    (b"access-control-allow-headers", b"authorization, content-type, accept"),
    (b"access-control-max-age", b"600"),
    (b"vary", b"Origin"),
    (b"content-length", b"0"),
]


def _is_preflight(scope: Scope) -> bool:
    return scope["method"] == "OPTIONS" and any(
        key == b"access-control-request-method" for key, _ in scope["headers"]
    )


async def _allow_preflight(send: Send, origin: str) -> None:
    """Answer an allowed origin's CORS preflight: which methods and headers it may send."""
    headers = [(b"access-control-allow-origin", origin.encode("latin-1")), *_PREFLIGHT_HEADERS]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _naming_origin(send: Send, origin: str) -> Send:
    """`send`, the response's headers letting the page of (allowed) `origin` read it."""
    named = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]

    async def send_naming_origin(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *named]}
        await send(message)

    return send_naming_origin


def _limited(receive: Receive, limit: int, overflow: Callable[[int], BaseException]) -> Receive:
    """`receive`, raising `overflow(limit)` once the body read so far passes `limit` bytes."""
    seen = 0

    async def receive_limited() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise overflow(limit)
        return message

    return receive_limited
