"""Ollama failures → `neuron_turn` provider errors, by transport exception or by status and body.

Ollama answers errors as `{"error": "<message>"}`: 404 for a model that was
never pulled, 400 for a bad request, 500 when the model runner fails, 503
when its request queue is full (`OLLAMA_MAX_QUEUE`). Ollama cloud adds 401/403
and 429. The class comes from `neuron_turn.loop.http_errors`' common table; what is
Ollama's own is the advice: pull a missing model, start a server that is not
running, allow for a slow model load. Every message is redacted, so an API key
echoed back by a proxy or a server never reaches a log line or a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Final

import httpx

from neuron_turn.loop.http_errors import (
    error_class_for_status,
    redact,
    retry_after,
    transport_errors,
)
from neuron_turn.loop.provider_errors import (
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

__all__ = [
    "API_KEY_ENV",
    "PROVIDER",
    "error_from_response",
    "map_transport_errors",
    "redact_error",
]

PROVIDER: Final = "ollama"
"""The provider name errors carry (`ProviderError.provider`)."""

API_KEY_ENV: Final = "OLLAMA_API_KEY"
"""The environment variable holding the Ollama cloud API key."""

_MESSAGES: Final[Mapping[type[ProviderError], str]] = {
    ProviderAuthenticationError: (
        "Ollama at {base_url} refused the credentials ({status}: {said}); "
        f"set {API_KEY_ENV} (or api_key=) to a valid Ollama API key"
    ),
    RateLimitError: "Ollama at {base_url} is rate limiting requests ({status}: {said})",
    ProviderOverloadedError: "Ollama at {base_url} is overloaded ({status}: {said})",
    ProviderTimeoutError: "Ollama at {base_url} timed out the request ({status}: {said})",
    ProviderServerError: "Ollama at {base_url} failed ({status}: {said})",
    InvalidRequestError: "Ollama rejected the request ({status}): {said}",
}
_UNEXPECTED: Final = "Ollama at {base_url} answered an unexpected {status}: {said}"


def redact_error(error: ProviderError, secret: str | None) -> ProviderError:
    """Return a copy of `error` (same class and fields) whose message has `secret` redacted."""
    return type(error)(
        redact(error.message, (secret,)),
        provider=error.provider,
        status_code=error.status_code,
        retry_after=error.retry_after,
    )


@contextmanager
def map_transport_errors(*, base_url: str, secret: str | None) -> Iterator[None]:
    """`neuron_turn.loop.http_errors.transport_errors`, with advice for a missing or slow server."""
    with transport_errors(provider=PROVIDER, secrets=(secret,), what=f"Ollama at {base_url}"):
        try:
            yield
        except httpx.ConnectError as exc:
            message = (
                f"no Ollama server at {base_url} ({exc}); start one with `ollama serve`, "
                "or set OLLAMA_HOST (or base_url=) to where it runs"
            )
            raise ProviderConnectionError(redact(message, (secret,)), provider=PROVIDER) from exc
        except httpx.TimeoutException as exc:
            phase = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
            message = (
                f"timed out {phase} Ollama at {base_url} ({type(exc).__name__}); "
                "loading a model can take minutes: raise the provider's timeout= if this repeats"
            )
            raise ProviderTimeoutError(redact(message, (secret,)), provider=PROVIDER) from exc


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
    error_type, message = _classify(status, _api_message(body), model=model, base_url=base_url)
    return error_type(
        redact(message, (secret,)),
        provider=PROVIDER,
        status_code=status,
        retry_after=retry_after(headers) if error_type.retryable else None,
    )


def _classify(
    status: int, api_message: str | None, *, model: str, base_url: str
) -> tuple[type[ProviderError], str]:
    if status == 404:
        return _not_found(api_message, model=model, base_url=base_url)
    error_type = error_class_for_status(status)
    said = api_message if api_message is not None else "no error message"
    template = _MESSAGES.get(error_type, _UNEXPECTED)
    return error_type, template.format(base_url=base_url, status=status, said=said)


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
    except (ValueError, RecursionError):  # RecursionError: nested past what Python parses
        return None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict):  # OpenAI-style envelopes from proxies in front of Ollama
        error = error.get("message")
    return error if isinstance(error, str) else None
