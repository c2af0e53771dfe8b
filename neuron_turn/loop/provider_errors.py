"""Errors a provider raises; the class says whether the same call may succeed later.

    ProviderError
    ├── RetryableProviderError       a retry may help (retry_after: seconds, when known)
    │   ├── RateLimitError           429
    │   ├── ProviderOverloadedError  529, 503
    │   ├── ProviderServerError      500, 502, 409, other 5xx
    │   ├── ProviderConnectionError  connect / network failure
    │   └── ProviderTimeoutError     connect / read timeout, 408, 504
    └── NonRetryableProviderError    the same call will fail again
        ├── ProviderAuthenticationError  401, 403, missing key
        ├── InvalidRequestError          400, 422
        ├── ModelNotFoundError           404 on the model
        └── ProviderResponseError        a 200 whose body is not what the API documents

The loop maps by class: retryable → `layer0.RetryableError` (keeping
`retry_after`), authentication and invalid request → `layer0.NonRetryableError`,
anything else → `layer0.ModelError`. `neuron_turn.loop.http_errors` maps HTTP
statuses and httpx failures to these classes for provider plugins.
"""

from __future__ import annotations

import math
from typing import ClassVar, Final

__all__ = [
    "MAX_RETRY_AFTER",
    "InvalidRequestError",
    "ModelNotFoundError",
    "NonRetryableProviderError",
    "ProviderAuthenticationError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderOverloadedError",
    "ProviderResponseError",
    "ProviderServerError",
    "ProviderTimeoutError",
    "RateLimitError",
    "RetryableProviderError",
]


MAX_RETRY_AFTER: Final = 86_400.0
"""The longest wait a `retry_after` says (a day); a server asking for more is held to it."""


class ProviderError(Exception):
    """A model call failed. Messages never include API keys.

    `retry_after` is kept a wait an orchestrator can schedule: from 0 to
    `MAX_RETRY_AFTER` seconds, or None. A server's `Retry-After: 1e300` (or
    NaN) is the server's word, and must not overflow a retry timer (Temporal's
    timedelta raised OverflowError on it).
    """

    retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status_code = status_code
        self.retry_after = _schedulable(retry_after)


class RetryableProviderError(ProviderError):
    """The same call may succeed later."""

    retryable: ClassVar[bool] = True


class RateLimitError(RetryableProviderError):
    """The API refused the call for rate limits (429)."""


class ProviderOverloadedError(RetryableProviderError):
    """The API is overloaded (529, 503)."""


class ProviderServerError(RetryableProviderError):
    """The API failed on its side (500, 502, other 5xx)."""


class ProviderConnectionError(RetryableProviderError):
    """The API could not be reached."""


class ProviderTimeoutError(RetryableProviderError, TimeoutError):
    """The API did not answer in time."""


class NonRetryableProviderError(ProviderError):
    """The same call will fail again."""


class ProviderAuthenticationError(NonRetryableProviderError):
    """The API key is missing, wrong or lacks permission (401, 403)."""


class InvalidRequestError(NonRetryableProviderError, ValueError):
    """The API rejected the request as invalid (400, 422); the API's message is kept."""


class ModelNotFoundError(NonRetryableProviderError, LookupError):
    """The API does not know the model asked for (404)."""


class ProviderResponseError(NonRetryableProviderError):
    """The API answered 200 with a body that is not the documented JSON."""


def _schedulable(wait: float | None) -> float | None:
    if wait is None or math.isnan(wait) or math.isinf(wait):
        return None
    return min(max(float(wait), 0.0), MAX_RETRY_AFTER)
