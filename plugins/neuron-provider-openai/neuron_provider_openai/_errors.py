"""Map OpenAI-style error responses (and httpx failures) to `neuron_turn` provider errors.

OpenAI answers errors as `{"error": {"message", "type", "code", "param"}}`.
Compatible servers vary: OpenRouter puts an integer `code` and the upstream
text under `error.metadata.raw`, Ollama and llama.cpp may send
`{"error": "text"}`, older vLLM a top-level `message`, FastAPI a `detail`.
All of these are read; anything else is quoted (a short prefix). What every
HTTP API shares (the status table, `Retry-After`, httpx's exceptions, redaction)
comes from `neuron_turn.loop.http_errors`; here is what is OpenAI's own: its
`x-ratelimit-reset-*` durations and the `insufficient_quota` 429.
"""

from __future__ import annotations

import json
import math
import re
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
    RateLimitError,
)

_DURATION_PART: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_DURATION_SECONDS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


@dataclass(frozen=True, slots=True)
class ApiError:
    """What an error body says, whatever dialect of the OpenAI envelope it uses."""

    message: str
    type: str | None = None
    code: str | int | None = None


def parse_error_body(body: bytes) -> ApiError | None:
    """Read the error envelope of `body`; None when it is not JSON or has no message."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return api_error_from_json(data)


def api_error_from_json(data: object) -> ApiError | None:
    """Read an already-parsed error envelope (also used for errors inside a 200 or a stream)."""
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, str):
        return ApiError(error)
    if isinstance(error, dict):
        return _from_error_object(error)
    for key in ("message", "detail"):
        value = data.get(key)
        if isinstance(value, str):
            return ApiError(value, _str_or_none(data.get("type")), _code(data.get("code")))
        if value is not None:
            return ApiError(body_prefix(json.dumps(value)))
    return None


def _from_error_object(error: dict[str, object]) -> ApiError:
    message = error.get("message")
    text = message if isinstance(message, str) else body_prefix(json.dumps(error))
    metadata = error.get("metadata")
    # OpenRouter's message is "Provider returned error"; the useful text is the raw upstream one.
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if isinstance(raw, str) and raw and raw not in text:
        text = f"{text}: {raw}"
    return ApiError(text, _str_or_none(error.get("type")), _code(error.get("code")))


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _code(value: object) -> str | int | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, str | int) else None


def parse_duration(text: str) -> float | None:
    """Read a Go-style duration (`1s`, `6m0s`, `20ms`, `1h2m3.5s`) or plain seconds.

    None when unreadable or not finite: float() reads "nan", "inf" and 400
    digits as such, and no retry policy can wait for NaN or for ever.
    """
    text = text.strip()
    try:
        seconds = max(float(text), 0.0)
    except ValueError:
        parts = _DURATION_PART.findall(text)
        if not parts or "".join(number + unit for number, unit in parts) != text:
            return None
        seconds = sum(float(number) * _DURATION_SECONDS[unit] for number, unit in parts)
    return seconds if math.isfinite(seconds) else None


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait before retrying, from the headers the API sent; None if none say.

    Order: `retry-after-ms`, `retry-after` (seconds or an HTTP date), then
    OpenAI's `x-ratelimit-reset-requests` / `-tokens` for the limit that is
    used up (`x-ratelimit-remaining-*` is 0), or the later of the two when no
    remaining count says which.
    """
    seconds = http_errors.retry_after(headers)
    return seconds if seconds is not None else _ratelimit_reset(headers)


def _ratelimit_reset(headers: httpx.Headers) -> float | None:
    resets: dict[str, float] = {}
    for kind in ("requests", "tokens"):
        raw = headers.get(f"x-ratelimit-reset-{kind}")
        seconds = parse_duration(raw) if raw is not None else None
        if seconds is not None:
            resets[kind] = seconds
    exhausted = [
        seconds
        for kind, seconds in resets.items()
        if headers.get(f"x-ratelimit-remaining-{kind}", "").strip() == "0"
    ]
    candidates = exhausted or list(resets.values())
    return max(candidates) if candidates else None


def error_class(status: int, api_error: ApiError | None) -> type[ProviderError]:
    """The provider error class for an HTTP error `status` and what its body said."""
    cls = error_class_for_status(status)
    # An exhausted quota answers 429 too, but waiting does not refill it.
    if cls is RateLimitError and api_error is not None:
        if "insufficient_quota" in (api_error.code, api_error.type):
            return ProviderAuthenticationError
    return cls


def _kind(api_error: ApiError | None) -> str:
    if api_error is None:
        return ""
    parts = [str(part) for part in (api_error.type, api_error.code) if part is not None]
    return f" ({'/'.join(parts)})" if parts else ""


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
    kind = _kind(api_error)
    wait = retry_after(headers) if headers is not None and cls.retryable else None
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


# The string codes of errors that come inside a 200 (a stream's `error` event, a failed
# response); each is given the HTTP status the same error would have had as a response.
_CODE_STATUS: Final = {
    "rate_limit_exceeded": 429,
    "insufficient_quota": 429,
    "server_error": 500,
    "server_is_overloaded": 503,
    "invalid_prompt": 400,
    "invalid_request_error": 400,
    "context_length_exceeded": 400,
}


def status_for_code(code: str | int | None) -> int:
    """The HTTP status an error code inside a 200 stands for (unknown: 500, retryable).

    An integer code is an HTTP status already (OpenRouter); OpenAI's string
    codes are looked up, the image ones (`invalid_image`, `image_too_large`...)
    being the caller's fault (400).
    """
    if isinstance(code, int):
        return code if 400 <= code <= 599 else 500
    if code is None:
        return 500
    if code in _CODE_STATUS:
        return _CODE_STATUS[code]
    return 400 if "image" in code else 500
