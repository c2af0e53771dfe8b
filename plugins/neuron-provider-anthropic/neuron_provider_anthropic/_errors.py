"""Translating httpx failures and Anthropic error responses into `ProviderError`s.

Status decides the class; the body's `error.type` only refines it (an
`overloaded_error` on any 5xx is "overloaded", a spend-limit 429 is not
retryable) and names the class for errors streamed after a 200. Every message
passes through `redact`, so an API key echoed by a proxy never reaches a log.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Final

import httpx

from neuron_turn.provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    NonRetryableProviderError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloadedError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)

from ._retry_after import retry_after
from ._stream import StreamedError
from ._wire import PROVIDER

PREFIX_CHARS: Final = 200
"""How much of an unexpected body an error message quotes."""

_BY_TYPE: Final[dict[str, type[ProviderError]]] = {
    "invalid_request_error": InvalidRequestError,
    "request_too_large": InvalidRequestError,
    "authentication_error": ProviderAuthenticationError,
    "permission_error": ProviderAuthenticationError,
    "billing_error": NonRetryableProviderError,
    "not_found_error": ModelNotFoundError,
    "rate_limit_error": RateLimitError,
    "overloaded_error": ProviderOverloadedError,
    "timeout_error": ProviderTimeoutError,
    "api_error": ProviderServerError,
}
_SPEND_LIMIT: Final = "enforced_spend_limit_reached"


def redact(text: str, *, secret: str | None) -> str:
    """Return `text` with every occurrence of `secret` replaced."""
    return text.replace(secret, "[redacted]") if secret else text


def prefix(text: str, *, secret: str | None) -> str:
    """Return the first `PREFIX_CHARS` characters of `text`, redacted, for an error message."""
    return redact(text, secret=secret)[:PREFIX_CHARS]


@contextmanager
def transport_errors(*, secret: str | None) -> Iterator[None]:
    """Re-raise any httpx exception from the block as the matching `ProviderError`."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise ProviderTimeoutError(
            _transport_message("did not answer in time", exc=exc, secret=secret), provider=PROVIDER
        ) from exc
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise InvalidRequestError(
            _transport_message("cannot be called at this base_url", exc=exc, secret=secret),
            provider=PROVIDER,
        ) from exc
    except httpx.DecodingError as exc:
        raise ProviderResponseError(
            _transport_message("sent a body that cannot be decoded", exc=exc, secret=secret),
            provider=PROVIDER,
        ) from exc
    except (httpx.HTTPError, httpx.StreamError) as exc:
        raise ProviderConnectionError(
            _transport_message("could not be reached", exc=exc, secret=secret), provider=PROVIDER
        ) from exc


def _transport_message(what: str, *, exc: Exception, secret: str | None) -> str:
    detail = redact(str(exc), secret=secret) or "no detail"
    return f"the Anthropic API {what} ({type(exc).__name__}: {detail})"


def error_for_response(
    response: httpx.Response, *, model: str, secret: str | None, now: datetime | None = None
) -> ProviderError:
    """Return the error for a non-2xx `response` to a call for `model`."""
    status = response.status_code
    # Redact before _error_body truncates, so no part of a key survives the cut.
    kind, detail, code = _error_body(redact(response.text, secret=secret))
    cls = _class_for_status(status, kind=kind, code=code)
    described = f"{status} {kind}" if kind else str(status)
    if cls is ModelNotFoundError:
        message = f"model {model!r} not found ({described}): {detail}"
    else:
        message = f"Anthropic API error ({described}): {detail}"
    wait = (
        retry_after(response.headers, rate_limited=status == 429, now=now)
        if cls.retryable
        else None
    )
    return cls(message, provider=PROVIDER, status_code=status, retry_after=wait)


def error_for_event(event: StreamedError, *, model: str, secret: str | None) -> ProviderError:
    """Return the error for an `error` event streamed after a 200, by its error type."""
    kind = event.kind
    cls = _BY_TYPE.get(kind, ProviderServerError)
    detail = redact(event.message, secret=secret)
    if cls is ModelNotFoundError:
        return cls(f"model {model!r} not found ({kind}): {detail}", provider=PROVIDER)
    return cls(f"Anthropic API error in the stream ({kind}): {detail}", provider=PROVIDER)


def _class_for_status(status: int, *, kind: str | None, code: str | None) -> type[ProviderError]:
    if status in (401, 403):
        return ProviderAuthenticationError
    if status == 404:
        return ModelNotFoundError
    if status == 429:
        # A spend limit lifts at the next billing period, not after a back-off.
        return NonRetryableProviderError if code == _SPEND_LIMIT else RateLimitError
    if status in (503, 529) or kind == "overloaded_error":
        return ProviderOverloadedError
    if status in (408, 504):
        return ProviderTimeoutError
    if status >= 500:
        return ProviderServerError
    if status == 402:
        return NonRetryableProviderError
    if status >= 400:
        return InvalidRequestError
    return ProviderResponseError


def _error_body(text: str) -> tuple[str | None, str, str | None]:
    """Return `(error.type, error.message, error.details.error_code)` of an error body.

    A body that is not Anthropic's error JSON (a proxy's HTML page) gives
    `(None, <its first characters>, None)`.
    """
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None, text[:PREFIX_CHARS] or "(empty body)", None
    kind = error.get("type")
    message = error.get("message")
    details = error.get("details")
    code = details.get("error_code") if isinstance(details, dict) else None
    return (
        kind if isinstance(kind, str) else None,
        message if isinstance(message, str) else json.dumps(error)[:PREFIX_CHARS],
        code if isinstance(code, str) else None,
    )
