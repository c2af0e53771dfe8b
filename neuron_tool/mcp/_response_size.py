"""The cap on the size of a server's answer: found on either transport, reported as one error.

A stdio message over the cap is never held in memory whole: its reader keeps
its first and last bytes, finds the request it answers there, and answers that
request with `too_large_error` in its stead. Over HTTP, the `body_cap` hook stops
a JSON body at the cap, and the SDK's SSE reader stops an event there.
`too_large` recognises each of these when the request fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final

import httpx2
import mcp_types as types
from mcp import MCPError
from mcp_types import CONNECTION_CLOSED, PARSE_ERROR

DEFAULT_MAX_RESPONSE_BYTES: Final = 8 * 1024 * 1024
"""The largest answer a server may send unless told otherwise: 8 MiB."""

EDGE_BYTES: Final = 256
"""How much of each end of an oversize stdio message is kept to find its request id."""

# Implementation-defined server error codes run from -32000 to -32099; this one
# marks the error the client makes up itself. The data must match too.
_CODE: Final = -32099
_SIZE_KEY: Final = "neuronResponseBytes"
_LIMIT_KEY: Final = "neuronLimitBytes"
# What the SDK's SSE reader says when an event outgrows its limit.
_SSE_LIMIT: Final = re.compile(
    r"^SSE stream failed: Server-sent event exceeded the (\d+) byte limit"
)
_BODY_LIMIT: Final = "the answer is larger than max_response_bytes"
_ID: Final = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
_JSONRPC: Final = rb'\s*"jsonrpc"\s*:\s*"2\.0"\s*'
# The top-level "id" is the first key (perhaps after "jsonrpc"), as Python
# servers send it, or the last one (perhaps before "jsonrpc"), as TypeScript
# ones do; anchored at either end of the message, it cannot be a nested key.
_HEAD_ID: Final = re.compile(rb"\A\s*\{(?:" + _JSONRPC + rb",)?\s*\"id\"\s*:\s*" + _ID + rb"\s*,")
_TAIL_ID: Final = re.compile(rb",\s*\"id\"\s*:\s*" + _ID + rb"\s*(?:," + _JSONRPC + rb")?\}\s*\Z")


def request_id(head: bytes, tail: bytes) -> types.RequestId | None:
    """The id of the response whose first and last bytes these are, if it can be told."""
    match = _HEAD_ID.match(head) or _TAIL_ID.search(tail)
    if match is None:
        return None
    value = json.loads(match.group(1))
    return value if isinstance(value, int | str) else None


def too_large_error(request: types.RequestId, size: int, limit: int) -> types.JSONRPCError:
    """The error answer that stands in for a response of `size` bytes, over `limit`."""
    error = types.ErrorData(
        code=_CODE,
        message=f"the answer of {size} bytes is larger than max_response_bytes ({limit})",
        data={_SIZE_KEY: size, _LIMIT_KEY: limit},
    )
    return types.JSONRPCError(jsonrpc="2.0", id=request, error=error)


def too_large(exc: MCPError, limit: int) -> tuple[int | None, int] | None:
    """`(size, limit)` if `exc` says an answer was over the cap (`size` if known), else `None`."""
    data = exc.data
    if exc.code == _CODE and isinstance(data, dict):
        size, cap = data.get(_SIZE_KEY), data.get(_LIMIT_KEY)
        if isinstance(size, int) and isinstance(cap, int):
            return size, cap
    if exc.code == PARSE_ERROR and _BODY_LIMIT in exc.message:
        return None, limit
    if exc.code == CONNECTION_CLOSED:
        match = _SSE_LIMIT.match(exc.message)
        if match is not None:
            return None, int(match.group(1))
    return None


class ResponseTooLargeError(httpx2.StreamError):
    """An HTTP body outgrew the cap; a `StreamError` so the SDK fails only its request."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"{_BODY_LIMIT} ({limit} bytes)")


def body_cap(limit: int) -> Callable[[httpx2.Response], Awaitable[None]]:
    """An httpx2 response hook after which a body, unless an event stream, fails past `limit`.

    A hook rather than a transport, so the client keeps its own transport and
    proxy settings.
    """

    async def cap(response: httpx2.Response) -> None:
        # An event stream may stay open for the whole session; the SDK caps each event.
        streamed = response.headers.get("content-type", "").startswith("text/event-stream")
        if not streamed and isinstance(response.stream, httpx2.AsyncByteStream):
            response.stream = _CappedStream(response.stream, limit)

    return cap


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, stream: httpx2.AsyncByteStream, limit: int) -> None:
        self._stream = stream
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self._stream:
            size += len(chunk)
            if size > self._limit:
                raise ResponseTooLargeError(self._limit)
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()
