"""What every server we start checks before anything else: its bearer token and Host names.

Any local user can reach a loopback port, and a web page can reach it through
the user's browser (DNS rebinding), so the servers we start (the MCP server,
the A2A server) ask for a token on every bind and accept only the Host header
values of an explicit list. These are the rules they share.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Sequence
from typing import Final

from starlette.types import Scope

__all__ = [
    "LOOPBACK_HOSTS",
    "MIN_TOKEN_LENGTH",
    "allowed_hosts_for",
    "bearer_matches",
    "check_token",
    "is_loopback",
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
