"""Provider errors map to layer0 errors; the loop never retries."""

from __future__ import annotations

import pytest

from layer0 import ModelError, NonRetryableError, RetryableError, TurnError
from neuron_turn import (
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

from .support import answer, ask, build


@pytest.mark.parametrize(
    "error",
    [
        RateLimitError("slow down", retry_after=12.5),
        ProviderOverloadedError("overloaded", retry_after=3.0),
        ProviderServerError("500"),
        ProviderConnectionError("refused"),
        ProviderTimeoutError("read timeout"),
    ],
)
async def test_retryable_provider_errors_become_retryable_error_keeping_retry_after(
    error: ProviderError,
) -> None:
    turn, provider = build([error, answer("never")])
    with pytest.raises(RetryableError) as exc:
        await turn.execute(ask())
    assert exc.value.retry_after == error.retry_after
    assert exc.value.__cause__ is error
    assert len(provider.requests) == 1


@pytest.mark.parametrize(
    "error", [ProviderAuthenticationError("bad key"), InvalidRequestError("bad field")]
)
async def test_authentication_and_invalid_request_become_non_retryable(
    error: ProviderError,
) -> None:
    turn, _ = build([error])
    with pytest.raises(NonRetryableError, match=str(error)):
        await turn.execute(ask())


@pytest.mark.parametrize(
    "error", [ModelNotFoundError("no such model 'x'"), ProviderResponseError("garbage")]
)
async def test_other_provider_errors_become_model_error(error: ProviderError) -> None:
    turn, _ = build([error])
    with pytest.raises(ModelError, match=str(error)):
        await turn.execute(ask())


async def test_a_provider_bug_becomes_a_model_error_keeping_the_cause() -> None:
    bug = KeyError("choices")
    turn, _ = build([bug])
    with pytest.raises(ModelError) as exc:
        await turn.execute(ask())
    assert exc.value.__cause__ is bug
    assert isinstance(exc.value, TurnError)
