"""Ollama failures → `neuron_turn` provider errors, by transport exception or by status and body.

Ollama answers errors as `{"error": "<message>"}`: 404 for a model that was
never pulled, 400 for a bad request, 500 when the model runner fails, 503
when its request queue is full (`OLLAMA_MAX_QUEUE`). Ollama cloud adds 401/403
and 429. Every message built here is passed through `redact`, so an API key
echoed back by a proxy or a server never reaches a log line or a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
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
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)

__all__ = [
    "API_KEY_ENV",
    "PROVIDER",
    "body_prefix",
    "error_from_response",
    "map_transport_errors",
    "parse_retry_after",
    "redact",
    "redact_error",
]

PROVIDER: Final = "ollama"
"""The provider name errors carry (`ProviderError.provider`)."""

API_KEY_ENV: Final = "OLLAMA_API_KEY"
"""The environment variable holding the Ollama cloud API key."""

_PREFIX_CHARS: Final = 200
_REDACTED: Final = "[REDACTED]"


def redact(text: str, secret: str | None) -> str:
    """Return `text` with every occurrence of `secret` replaced."""
    return text.replace(secret, _REDACTED) if secret else text


def redact_error(error: ProviderError, secret: str | None) -> ProviderError:
    """Return a copy of `error` (same class and fields) whose message has `secret` redacted."""
    return type(error)(
        redact(error.message, secret),
        provider=error.provider,
        status_code=error.status_code,
        retry_after=error.retry_after,
    )


def body_prefix(body: str | bytes) -> str:
    """Return at most the first 200 characters of a body, for error messages."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return text[:_PREFIX_CHARS] + ("…" if len(text) > _PREFIX_CHARS else "")


@contextmanager
def map_transport_errors(*, base_url: str, secret: str | None) -> Iterator[None]:
    """Turn httpx exceptions raised inside the block into retryable provider errors."""
    try:
        yield
    except httpx.TimeoutException as exc:
        phase = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
        message = (
            f"timed out {phase} Ollama at {base_url} ({type(exc).__name__}); "
            "loading a model can take minutes: raise the provider's timeout= if this repeats"
        )
        raise ProviderTimeoutError(redact(message, secret), provider=PROVIDER) from exc
    except httpx.ConnectError as exc:
        message = (
            f"no Ollama server at {base_url} ({exc}); start one with `ollama serve`, "
            "or set OLLAMA_HOST (or base_url=) to where it runs"
        )
        raise ProviderConnectionError(redact(message, secret), provider=PROVIDER) from exc
    except httpx.DecodingError as exc:
        message = f"Ollama at {base_url} sent a body that could not be decoded: {exc}"
        raise ProviderResponseError(redact(message, secret), provider=PROVIDER) from exc
    except httpx.HTTPError as exc:
        message = f"connection to Ollama at {base_url} failed: {type(exc).__name__}: {exc}"
        raise ProviderConnectionError(redact(message, secret), provider=PROVIDER) from exc


def error_from_response(
    status: int,
    body: str,
    headers: Mapping[str, str],
    *,
    model: str,
    base_url: str,
    secret: str | None,
) -> ProviderError:
    """Return the provider error for a non-2xx answer (`body` is the decoded text)."""
    api_message = _api_message(body)
    retry_after = parse_retry_after(headers)
    error_type, message = _classify(status, api_message, model=model, base_url=base_url)
    return error_type(
        redact(message, secret),
        provider=PROVIDER,
        status_code=status,
        retry_after=retry_after if error_type.retryable else None,
    )


def _classify(
    status: int, api_message: str | None, *, model: str, base_url: str
) -> tuple[type[ProviderError], str]:
    said = api_message if api_message is not None else "no error message"
    if status in (401, 403):
        return ProviderAuthenticationError, (
            f"Ollama at {base_url} refused the credentials ({status}: {said}); "
            f"set {API_KEY_ENV} (or api_key=) to a valid Ollama API key"
        )
    if status == 404:
        return _not_found(api_message, model=model, base_url=base_url)
    if status == 429:
        return RateLimitError, f"Ollama at {base_url} is rate limiting requests (429: {said})"
    if status in (503, 529):
        return ProviderOverloadedError, f"Ollama at {base_url} is overloaded ({status}: {said})"
    if status == 408:
        return ProviderTimeoutError, f"Ollama at {base_url} timed out the request (408: {said})"
    if status >= 500:
        return ProviderServerError, f"Ollama at {base_url} failed ({status}: {said})"
    if status >= 400:
        return InvalidRequestError, f"Ollama rejected the request ({status}): {said}"
    return ProviderResponseError, f"Ollama at {base_url} answered an unexpected {status}: {said}"


def _not_found(
    api_message: str | None, *, model: str, base_url: str
) -> tuple[type[ProviderError], str]:
    # Ollama's own 404 is a JSON error about the model; a plain-text
    # "404 page not found" means base_url points at something without /api/chat.
    if api_message is not None:
        return ModelNotFoundError, (
            f"Ollama model {model!r} is not available at {base_url} ({api_message}); "
            f"pull it with `ollama pull {model}`"
        )
    return InvalidRequestError, (
        f"{base_url}/api/chat does not exist (404); is base_url (or OLLAMA_HOST) "
        "an Ollama server, without a /v1 suffix?"
    )


def _api_message(body: str) -> str | None:
    """Return the `error` text of an Ollama error body, or None when the body is not one."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict):  # OpenAI-style envelopes from proxies in front of Ollama
        error = error.get("message")
    return error if isinstance(error, str) else None


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Return seconds to wait from `retry-after-ms` or `retry-after` (seconds or HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)
