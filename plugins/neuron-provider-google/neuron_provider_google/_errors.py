"""Map Gemini API error responses (and httpx failures) to `neuron_turn` provider errors.

Google answers errors as `{"error": {"code", "message", "status", "details"}}`
(`google.rpc.Status`); a streamed call may send the same object as an event,
and some gateways wrap it in a one-element list. What every HTTP API shares
(the status table, `Retry-After`, httpx's exceptions, redaction) comes from
`neuron_turn.loop.http_errors`; here is what is Google's own: a bad key
answers 400 with the reason `API_KEY_INVALID`, and a 429 says how long to
wait in a `RetryInfo` detail (`"retryDelay": "34s"`) rather than a header.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import httpx

from neuron_turn.loop import http_errors
from neuron_turn.loop.http_errors import body_prefix, error_class_for_status
from neuron_turn.loop.http_provider import (
    ErrorContext,
    status_error,
    unexpected_error_body,
)
from neuron_turn.loop.provider_errors import (
    ProviderAuthenticationError,
    ProviderError,
)

_SECONDS: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)s")
_KEY_REASONS: Final = frozenset(
    {
        "API_KEY_INVALID",
        "API_KEY_EXPIRED",
        "API_KEY_SERVICE_BLOCKED",
        "API_KEY_HTTP_REFERRER_BLOCKED",
    }
)
"""`ErrorInfo.reason`s saying the key itself is wrong, whatever status came with them."""
_RPC_STATUS_CODES: Final[Mapping[str, int]] = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
"""The HTTP status Google gives each `google.rpc.Code`, for an error that comes without one."""


@dataclass(frozen=True, slots=True)
class ApiError:
    """What a Google error body says."""

    message: str
    status: str | None = None
    """The `google.rpc.Code` name: `INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`..."""
    code: int | None = None
    reason: str | None = None
    """The `ErrorInfo` detail's reason, e.g. `API_KEY_INVALID`."""
    retry_delay: float | None = None
    """Seconds from the `RetryInfo` detail's `retryDelay`."""


def parse_error_body(body: bytes) -> ApiError | None:
    """Read the error envelope of `body`; None when it is not JSON or holds no error."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return api_error_from_json(data)


def api_error_from_json(data: object) -> ApiError | None:
    """Read an already-parsed error envelope (a response's, or one inside a 200 or a stream)."""
    if isinstance(data, list) and len(data) == 1:
        data = data[0]  # the array form of :streamGenerateContent without alt=sse
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, str) and error:
        return ApiError(error)
    if not isinstance(error, dict):
        return None
    message = error.get("message")
    status = error.get("status")
    code = error.get("code")
    reason, delay = _details(error.get("details"))
    return ApiError(
        message if isinstance(message, str) and message else body_prefix(json.dumps(error)),
        status if isinstance(status, str) else None,
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        reason,
        delay,
    )


def _details(details: object) -> tuple[str | None, float | None]:
    reason: str | None = None
    delay: float | None = None
    for detail in details if isinstance(details, list) else []:
        if not isinstance(detail, dict):
            continue
        kind = detail.get("@type")
        kind = kind if isinstance(kind, str) else ""
        if kind.endswith("google.rpc.ErrorInfo") and isinstance(detail.get("reason"), str):
            reason = detail["reason"]
        elif kind.endswith("google.rpc.RetryInfo"):
            delay = parse_delay(detail.get("retryDelay"))
    return reason, delay


def parse_delay(value: object) -> float | None:
    """Read a protobuf JSON duration (`"34s"`, `"1.5s"`); None when it is not one."""
    if not isinstance(value, str):
        return None
    matched = _SECONDS.fullmatch(value.strip())
    return float(matched.group(1)) if matched else None


def error_class(status: int, api_error: ApiError | None) -> type[ProviderError]:
    """The provider error class for an HTTP error `status` and what its body said."""
    if api_error is not None and api_error.reason in _KEY_REASONS:
        return ProviderAuthenticationError
    return error_class_for_status(status)


def status_of(api_error: ApiError) -> int:
    """The HTTP status an error inside a 200 stands for: its code, else its status name's.

    Unknown: 500, retryable, as a server fault mid-answer usually is.
    """
    if api_error.code is not None and 400 <= api_error.code <= 599:
        return api_error.code
    return _RPC_STATUS_CODES.get(api_error.status or "", 500)


def error_from_status(
    status: int,
    api_error: ApiError | None,
    *,
    headers: httpx.Headers | None,
    context: ErrorContext,
    reason: str = "",
) -> ProviderError:
    """Build the provider error for an HTTP error `status` and what its body said."""
    cls = error_class(status, api_error)
    detail = api_error.message if api_error is not None else (reason or "no error message")
    kind = f" ({api_error.status})" if api_error is not None and api_error.status else ""
    wait = None
    if cls.retryable:
        wait = http_errors.retry_after(headers) if headers is not None else None
        if wait is None and api_error is not None:
            wait = api_error.retry_delay
    return status_error(cls, status, detail, context=context, kind=kind, retry_after=wait)


def error_from_response(response: httpx.Response, context: ErrorContext) -> ProviderError:
    """Build the provider error for a read HTTP error `response`."""
    api_error = parse_error_body(response.content)
    if api_error is None and response.content:
        api_error = ApiError(unexpected_error_body(response.content, context))
    return error_from_status(
        response.status_code,
        api_error,
        headers=response.headers,
        context=context,
        reason=response.reason_phrase,
    )
