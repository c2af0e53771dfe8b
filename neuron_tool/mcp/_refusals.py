"""`stream_refusal`: whether a server's error answer to a request for a change stream may pass.

A server may answer `subscriptions/listen` (or, before MCP 2026-07-28,
`resources/subscribe`) with a JSON-RPC error before acknowledging it. Some
such errors are final: the server has no streams, or finds the request itself
wrong. Others may pass: the MCP SDK's own server
refuses a stream past its limit of open ones (`ListenHandler`'s
`max_subscriptions`) with an internal error, which frees up as other streams end.
A final one is not asked again; one that may pass is tried again on the
client's backoff, which bounds what a wrong guess costs.

The code decides, never the words: MCP 2026-07-28 defines no error of its own
for a refused stream, so the message is whatever an implementation chose (the
SDK's "Subscription limit reached" among them) and free to change, while a
code's meaning is fixed by JSON-RPC and MCP for every server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mcp_types import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
    UNSUPPORTED_PROTOCOL_VERSION,
)

from .errors import MCPRequestError, MCPSubscriptionFinalError, MCPSubscriptionGaveUpError

# "Resource not found" in MCP before 2026-07-28, which retired the code: a
# server of that era saying so of a stream's resources will not change its mind.
_RESOURCE_NOT_FOUND: Final = -32002
# The codes MCP reserves for errors it defines (2026-07-28 allocates them in
# order from -32020). Each so far says the request itself is wrong (its headers,
# its capabilities, its protocol version), so one yet to be allocated is taken so too.
_MCP_DEFINED: Final = range(-32099, -32019)
# The codes JSON-RPC leaves to a server's implementation ("server error").
_SERVER_ERRORS: Final = range(-32019, -31999)

_FINAL: Final = {
    PARSE_ERROR: "a parse error",
    INVALID_REQUEST: "an invalid request",
    METHOD_NOT_FOUND: "method not found",
    INVALID_PARAMS: "invalid params",
    _RESOURCE_NOT_FOUND: "resource not found",
    HEADER_MISMATCH: "headers that do not match the request",
    MISSING_REQUIRED_CLIENT_CAPABILITY: "a client capability it requires",
    UNSUPPORTED_PROTOCOL_VERSION: "an unsupported protocol version",
}
_PASSING: Final = {
    INTERNAL_ERROR: "an internal error",
    REQUEST_TIMEOUT: "a timeout",
}
# How much of a server's message a log line quotes: a hostile one may be megabytes.
_MESSAGE_SHOWN: Final = 200


@dataclass(frozen=True)
class Refusal:
    """A server's error answer to a request for a change stream, and what it means."""

    code: int
    message: str
    meaning: str
    """What the code says, in a few words ("method not found")."""
    transient: bool
    """Whether it may pass, so that asking again later is worth it."""

    def __str__(self) -> str:
        message = self.message
        if len(message) > _MESSAGE_SHOWN:
            message = message[: _MESSAGE_SHOWN - 3] + "..."
        verdict = "which may pass" if self.transient else "which is final"
        return f"the error {message!r}, code {self.code}: {self.meaning}, {verdict}"


def stream_refusal(exc: MCPRequestError) -> Refusal:
    """What the server's error answer `exc` to a request for a stream means.

    Final: the request errors of JSON-RPC (parse error, invalid request, method
    not found, invalid params), MCP's old "resource not found", and the codes MCP
    reserves for errors it defines. Any other may pass: an internal error, a
    timeout, the codes JSON-RPC leaves to a server's implementation, and codes
    no standard gives a meaning, since asking again costs a request a pause and
    giving up costs the session its stream.
    """
    code = exc.code
    final = _FINAL.get(code)
    if final is not None:
        return Refusal(code, exc.message, final, transient=False)
    if code in _MCP_DEFINED:
        return Refusal(code, exc.message, "an error MCP reserves for its own", transient=False)
    passing = _PASSING.get(code)
    if passing is None:
        passing = "a server error" if code in _SERVER_ERRORS else "a code of the server's own"
    return Refusal(code, exc.message, passing, transient=True)


SUBSCRIBE_RETRIES: Final = 3
"""How many times at most `subscribe_resource` asks again after a refusal that may pass.

Fewer than a stream's reopening (`StreamBackoff.attempts`): a caller waits on this
one, and the usual refusal of an unknown resource (an SDK server's handler raising,
an internal error) may pass by its code though it never will; three more asks on
the backoff's first pauses (0.5, 1 and 2 s by default) see a crowded server free up.
"""

_HANDLER_RAISED: Final = 0
"""What the MCP SDK's server answers when a `resources/subscribe` handler raises: no
JSON-RPC code at all. A handler that raised on this URI raises again, so it is final."""


def subscribe_refusal(exc: MCPRequestError) -> Refusal:
    """What the server's error answer `exc` to a subscription means.

    As `stream_refusal` judges it, but code 0, a handler that raised, is final.
    """
    if exc.code == _HANDLER_RAISED:
        return Refusal(
            exc.code, exc.message, "no JSON-RPC code: its handler raised", transient=False
        )
    return stream_refusal(exc)


def subscription_refused(server: str, uri: str, refused: Refusal) -> MCPSubscriptionFinalError:
    """The error for `subscribe_resource(uri)` refused with `refused`, a final refusal."""
    return MCPSubscriptionFinalError(
        server,
        uri,
        code=refused.code,
        message=refused.message,
        meaning=refused.meaning,
        shown=str(refused),
    )


def subscription_given_up(
    server: str, uri: str, refused: Refusal, *, attempts: int, seconds: float, backoff: bool
) -> MCPSubscriptionGaveUpError:
    """The error for `subscribe_resource(uri)` refused for now `attempts` times, the last `refused`.

    `backoff` says whether the client asks again at all (`reopen_streams` is not None).
    """
    return MCPSubscriptionGaveUpError(
        server,
        uri,
        code=refused.code,
        message=refused.message,
        meaning=refused.meaning,
        shown=str(refused),
        attempts=attempts,
        seconds=seconds,
        backoff=backoff,
    )
