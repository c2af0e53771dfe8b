"""Translating Anthropic error responses into `ProviderError`s.

Status decides the class, by `neuron_turn.loop.http_errors`' common table; the body's
`error.type` only refines it (an `overloaded_error` on any 5xx is "overloaded", a
spend-limit 429 is not retryable) and names the class for errors streamed after a
200. Every message is redacted, so an API key echoed by a proxy never reaches a log.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Final

import httpx

from neuron_turn.loop.http_errors import body_prefix, error_class_for_status, redact
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    NonRetryableProviderError,
    ProviderAuthenticationError,
    ProviderError,
    ProviderOverloadedError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)

from ._name import PROVIDER
from ._retry_after import retry_after
from ._stream import StreamedError

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


def error_for_response(
    response: httpx.Response,
    *,
    model: str,
    secrets: Sequence[str],
    now: datetime | None = None,
) -> ProviderError:
    """Return the error for a non-2xx `response` to a call for `model`, no secret in it.

    `secrets` are the call's (its key, a remote MCP server's token an error body may echo).
    """
    status = response.status_code
    # Redact before _error_body truncates, so no part of a secret survives the cut.
    kind, detail, code = _error_body(redact(response.text, secrets))
    cls = _class_for(status, kind=kind, code=code)
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


def error_for_event(event: StreamedError, *, model: str, secrets: Sequence[str]) -> ProviderError:
    """Return the error for an `error` event streamed after a 200, by its error type."""
    kind = event.kind
    cls = _BY_TYPE.get(kind, ProviderServerError)
    detail = redact(event.message, secrets)
    if cls is ModelNotFoundError:
        return cls(f"model {model!r} not found ({kind}): {detail}", provider=PROVIDER)
    return cls(f"Anthropic API error in the stream ({kind}): {detail}", provider=PROVIDER)


def _class_for(status: int, *, kind: str | None, code: str | None) -> type[ProviderError]:
    if status == 429 and code == _SPEND_LIMIT:
        # A spend limit lifts at the next billing period, not after a back-off.
        return NonRetryableProviderError
    if status == 402:  # billing_error: paying, not waiting, fixes it
        return NonRetryableProviderError
    if status >= 500 and kind == "overloaded_error":
        return ProviderOverloadedError
    return error_class_for_status(status)


def _error_body(text: str) -> tuple[str | None, str, str | None]:
    """Return `(error.type, error.message, error.details.error_code)` of an error body.

    A body that is not Anthropic's error JSON (a proxy's HTML page) gives
    `(None, <its first characters>, None)`.
    """
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None, body_prefix(text) or "(empty body)", None
    kind = error.get("type")
    message = error.get("message")
    details = error.get("details")
    code = details.get("error_code") if isinstance(details, dict) else None
    return (
        kind if isinstance(kind, str) else None,
        message if isinstance(message, str) else body_prefix(text),
        code if isinstance(code, str) else None,
    )
