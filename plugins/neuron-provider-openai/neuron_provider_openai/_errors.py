"""Map httpx failures and OpenAI-style error responses to `neuron_turn` provider errors.

OpenAI answers errors as `{"error": {"message", "type", "code", "param"}}`.
Compatible servers vary: OpenRouter puts an integer `code` and the upstream
text under `error.metadata.raw`, Ollama and llama.cpp may send
`{"error": "text"}`, older vLLM a top-level `message`, FastAPI a `detail`.
All of these are read; anything else is quoted (a short prefix).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Final

import httpx

from neuron_turn.provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloadedError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)

PREFIX_CHARS: Final = 200
"""How much of an unexpected body an error message quotes."""

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


@dataclass(frozen=True, slots=True)
class ErrorContext:
    """What an error message needs besides the response: who, which model, where, what to hide."""

    provider: str
    model: str
    url: str
    secrets: Sequence[str] = ()
    auth_hint: str = ""


def scrub(text: str, secrets: Sequence[str]) -> str:
    """Replace every secret in `text` with `***` (APIs may echo a key back in an error)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def quote_prefix(body: bytes | str, secrets: Sequence[str] = ()) -> str:
    """Return the first `PREFIX_CHARS` characters of `body`, scrubbed, for an error message."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    prefix = scrub(text, secrets)[:PREFIX_CHARS]
    return repr(prefix) if prefix else "an empty body"


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
            return ApiError(json.dumps(value)[:PREFIX_CHARS])
    return None


def _from_error_object(error: dict[str, object]) -> ApiError:
    message = error.get("message")
    text = message if isinstance(message, str) else json.dumps(error)[:PREFIX_CHARS]
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
    """Read a Go-style duration (`1s`, `6m0s`, `20ms`, `1h2m3.5s`) or plain seconds."""
    text = text.strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _DURATION_SECONDS[unit] for number, unit in parts)


def _http_date_delay(text: str) -> float | None:
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait before retrying, from the headers the API sent; None if none say.

    Order: `retry-after-ms`, `retry-after` (seconds or an HTTP date), then
    OpenAI's `x-ratelimit-reset-requests` / `-tokens` for the limit that is
    used up (`x-ratelimit-remaining-*` is 0), or the later of the two when no
    remaining count says which.
    """
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    if (value := headers.get("retry-after")) is not None:
        seconds = parse_duration(value)
        if seconds is not None:
            return seconds
        if (delay := _http_date_delay(value)) is not None:
            return delay
    return _ratelimit_reset(headers)


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
    """The provider error class for an HTTP error `status`."""
    if status in (401, 403):
        return ProviderAuthenticationError
    if status == 404:
        return ModelNotFoundError
    if status == 408:
        return ProviderTimeoutError
    if status == 429:
        # An exhausted quota answers 429 too, but waiting does not refill it.
        if api_error is not None and "insufficient_quota" in (api_error.code, api_error.type):
            return ProviderAuthenticationError
        return RateLimitError
    if status in (503, 529):
        return ProviderOverloadedError
    # 409 is OpenAI's "another request holds a lock": the OpenAI SDK retries it.
    if status >= 500 or status == 409:
        return ProviderServerError
    return InvalidRequestError


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
    message = f"{context.provider}: HTTP {status}{kind}: {detail}"
    if cls is ModelNotFoundError:
        message = (
            f"{context.provider}: model {context.model!r} not found "
            f"(HTTP 404 from {context.url}): {detail}"
        )
    elif cls is ProviderAuthenticationError and context.auth_hint:
        message = f"{message} ({context.auth_hint})"
    wait = retry_after(headers) if headers is not None and cls.retryable else None
    return cls(
        scrub(message, context.secrets),
        provider=context.provider,
        status_code=status,
        retry_after=wait,
    )


def error_from_response(response: httpx.Response, context: ErrorContext) -> ProviderError:
    """Build the provider error for a read HTTP error `response`."""
    api_error = parse_error_body(response.content)
    if api_error is None and response.content:
        api_error = ApiError(f"unexpected error body {quote_prefix(response.content)}")
    return error_from_status(
        response.status_code,
        api_error,
        headers=response.headers,
        context=context,
        reason=response.reason_phrase,
    )


@contextmanager
def mapped_transport_errors(context: ErrorContext) -> Iterator[None]:
    """Turn httpx exceptions raised inside the block into provider errors.

    Timeouts (connect, read, write, pool) become `ProviderTimeoutError`, every
    other transport failure `ProviderConnectionError`; both are retryable.
    """
    where = f"{context.provider}: calling {context.url}"
    try:
        yield
    except httpx.TimeoutException as exc:
        kind = type(exc).__name__
        raise ProviderTimeoutError(
            scrub(f"{where} timed out ({kind})", context.secrets), provider=context.provider
        ) from exc
    except httpx.TransportError as exc:
        detail = scrub(f"{where} failed: {type(exc).__name__}: {exc}", context.secrets)
        raise ProviderConnectionError(detail, provider=context.provider) from exc
    except httpx.HTTPError as exc:
        detail = scrub(f"{where} failed: {type(exc).__name__}: {exc}", context.secrets)
        raise ProviderConnectionError(detail, provider=context.provider) from exc
    except httpx.InvalidURL as exc:
        detail = scrub(f"{where}: invalid URL: {exc}", context.secrets)
        raise InvalidRequestError(detail, provider=context.provider) from exc
