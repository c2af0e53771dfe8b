"""How the AG-UI server refuses a request: a JSON body `{"error": message}` with the status.

The guard itself is the one every server we start has
(`neuron_tool.http_guard.RequestGuard`: Host and Origin lists, the bearer
token on every request, a body limit); the endpoint refuses with this too.
"""

from __future__ import annotations

import json

from starlette.types import Send

__all__ = ["refuse"]


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
