"""How the A2A server refuses what its guard stops: in JSON-RPC's words.

The guard is the one every server we start has (`neuron_tool.http_guard.RequestGuard`:
Host and Origin lists, the bearer token, a body limit); here the agent card
alone is public, since a client reads it to learn that it needs the token.
A refusal is a JSON-RPC error body, so A2A clients show its message rather
than "HTTP 401".
"""

from __future__ import annotations

from typing import Final

from starlette.exceptions import HTTPException

from neuron_tool.http_guard import Refuse, json_refusal

__all__ = ["refuse", "too_large"]

# JSON-RPC error codes for refusals made before the A2A handler sees the request.
_INVALID_REQUEST_CODE: Final = -32600
_UNAUTHORIZED_CODE: Final = -32001


def _rpc_error(status: int, message: str) -> object:
    code = _UNAUTHORIZED_CODE if status == 401 else _INVALID_REQUEST_CODE
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


refuse: Final[Refuse] = json_refusal("a2a", _rpc_error)
"""Answer `status` with a JSON-RPC error body saying `message`."""


def too_large(limit: int) -> HTTPException:
    """The error a chunked body past `limit` raises; the JSON-RPC layer answers it as 413."""
    return HTTPException(413, f"the request body is larger than {limit} bytes")
