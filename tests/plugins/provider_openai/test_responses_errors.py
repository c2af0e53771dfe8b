"""Errors of the Responses provider: HTTP statuses, failed responses, errors inside a 200."""

from __future__ import annotations

import httpx
import pytest

from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
    ProviderServerError,
    RateLimitError,
)

from ._responses_support import mocked, response
from ._support import KEY, json_response, request


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, object]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, InvalidRequestError),
        (401, ProviderAuthenticationError),
        (403, ProviderAuthenticationError),
        (404, ModelNotFoundError),
        (429, RateLimitError),
        (500, ProviderServerError),
    ],
)
async def test_http_errors_map_as_for_chat_completions(
    status: int, error: type[ProviderError]
) -> None:
    provider, _ = mocked(json_response(error_body("nope", "invalid_request_error"), status))
    with pytest.raises(error) as caught:
        await provider.complete(request())
    assert caught.value.provider == "openai-responses"
    assert caught.value.status_code == status


async def test_rate_limit_carries_retry_after() -> None:
    answer = json_response(error_body("slow", "requests"), 429, **{"retry-after": "7"})
    provider, _ = mocked(answer)
    with pytest.raises(RateLimitError) as caught:
        await provider.complete(request())
    assert caught.value.retry_after == 7.0


async def test_a_401_message_holds_no_key_and_hints_at_the_variable() -> None:
    provider, _ = mocked(json_response(error_body(f"Incorrect API key {KEY}", "x"), 401))
    with pytest.raises(ProviderAuthenticationError) as caught:
        await provider.complete(request())
    assert KEY not in str(caught.value)
    assert "OPENAI_API_KEY" in str(caught.value)


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("rate_limit_exceeded", RateLimitError),
        ("server_error", ProviderServerError),
        ("invalid_image", InvalidRequestError),
        (None, ProviderServerError),
    ],
)
async def test_a_failed_response_maps_its_error_code(
    code: str | None, error: type[ProviderError]
) -> None:
    failed = response(status="failed", output=[], error={"code": code, "message": "failed"})
    provider, _ = mocked(json_response(failed))
    with pytest.raises(error, match="failed"):
        await provider.complete(request())


async def test_an_error_envelope_in_a_200_is_not_read_as_an_answer() -> None:
    provider, _ = mocked(json_response({"error": {"message": "Upstream down", "code": 502}}))
    with pytest.raises(ProviderServerError, match="Upstream down"):
        await provider.complete(request())


async def test_a_body_that_is_not_json_is_a_response_error_quoting_it() -> None:
    provider, _ = mocked(httpx.Response(200, content=b"<html>oops</html>"))
    with pytest.raises(ProviderResponseError, match="expected a JSON Responses API response"):
        await provider.complete(request())


async def test_a_network_failure_is_a_retryable_connection_error() -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    provider, _ = mocked(fail)  # type: ignore[arg-type]
    with pytest.raises(ProviderConnectionError):
        await provider.complete(request())


async def test_missing_key_fails_at_the_first_call_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider, recorder = mocked(api_key=None)
    with pytest.raises(ProviderAuthenticationError, match="OPENAI_API_KEY"):
        await provider.complete(request())
    assert recorder.requests == []
