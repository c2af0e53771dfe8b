"""Reading a model API's answer within a size limit, counted after decompression.

httpx reads a body whole and inflates gzip and deflate as it goes, with no
bound: a server (or a proxy before it) sending an endless body or stream, or
a few megabytes of gzip that inflate to gigabytes, made a provider hold all
of it in memory. The HTTP providers read every body through here instead:

- `bounded_read`: a streamed response read into one holding its body, an
  answer up to the limit (past it a `ProviderResponseError`), an error body
  up to `ERROR_BODY_BYTES` (its start is all an error message quotes);
- `bounded_chunks`: a stream's decompressed chunks, failing past the limit.

This module imports httpx: import it from a provider module, never from a
plugin's entry-point module, so that listing plugins stays cheap.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import httpx

from .http_errors import utf8
from .provider_errors import ProviderResponseError

__all__ = [
    "ERROR_BODY_BYTES",
    "MAX_RESPONSE_BYTES",
    "bounded_chunks",
    "bounded_read",
]

MAX_RESPONSE_BYTES: Final = 256 * 1024 * 1024
"""The default most an answer (a body, or a whole stream) may be, decompressed: 256 MiB.

Far above any text answer; room for generated images (an inline image is
allowed up to 48 MiB, two thirds again as base64).
"""
ERROR_BODY_BYTES: Final = 64 * 1024
"""How much of an error body is read; the rest is dropped unread."""

# Describe the body as sent; the body a bounded response holds is plain and whole.
_BODY_HEADERS: Final = frozenset({"content-encoding", "content-length", "transfer-encoding"})


async def bounded_chunks(
    response: httpx.Response, *, limit: int, provider: str, what: str
) -> AsyncIterator[bytes]:
    """Yield `response`'s decompressed chunks; raise once they come to more than `limit` bytes.

    Args:
        response: A response opened as a stream, not yet read.
        limit: The most bytes the whole body may be.
        provider: The provider name the error carries.
        what: Who sent it, for the message ("openai: the API at https://...").

    Raises:
        ProviderResponseError: the body is larger than `limit`; reading stops there.
    """
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise _too_large(response, limit=limit, provider=provider, what=what)
        yield chunk


async def bounded_read(
    response: httpx.Response, *, limit: int, provider: str, what: str
) -> httpx.Response:
    """Read the streamed `response` into a closed response holding its decompressed body.

    A success's body may be up to `limit` bytes; any other status keeps its
    first `ERROR_BODY_BYTES` and drops the rest, so a huge error body is still
    the error its status says. The returned response reads its text as UTF-8
    (`http_errors.utf8`) and has the original's status, headers (less those
    describing the body as sent) and request.

    Raises:
        ProviderResponseError: a success's body is larger than `limit`.
    """
    keep = limit if response.is_success else ERROR_BODY_BYTES
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > keep:
                if response.is_success:
                    raise _too_large(response, limit=limit, provider=provider, what=what)
                chunks.append(chunk[: len(chunk) - (size - keep)])
                break
            chunks.append(chunk)
    finally:
        await response.aclose()
    headers = [
        (name, value)
        for name, value in response.headers.multi_items()
        if name.lower() not in _BODY_HEADERS
    ]
    return utf8(
        httpx.Response(
            response.status_code,
            headers=headers,
            content=b"".join(chunks),
            request=response.request,
        )
    )


def _too_large(
    response: httpx.Response, *, limit: int, provider: str, what: str
) -> ProviderResponseError:
    return ProviderResponseError(
        f"{what} sent an answer of more than {limit:,} bytes (max_response_bytes); "
        "the rest was not read and the answer is discarded",
        provider=provider,
        status_code=response.status_code,
    )
