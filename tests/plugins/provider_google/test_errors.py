"""Errors of the Google provider: HTTP statuses and Google's error bodies, the network, the key."""

from __future__ import annotations

import httpx
import pytest

from neuron_turn.loop.provider_errors import (
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

from ._support import KEY, json_response, mocked, request


def error_body(code: int, status: str, message: str, *details: dict[str, object]):
    """Google's error envelope (`google.rpc.Status`)."""
    error: dict[str, object] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = list(details)
    return {"error": error}


@pytest.mark.parametrize(
    ("status", "rpc", "error"),
    [
        (400, "INVALID_ARGUMENT", InvalidRequestError),
        (400, "FAILED_PRECONDITION", InvalidRequestError),
        (401, "UNAUTHENTICATED", ProviderAuthenticationError),
        (403, "PERMISSION_DENIED", ProviderAuthenticationError),
        (404, "NOT_FOUND", ModelNotFoundError),
        (429, "RESOURCE_EXHAUSTED", RateLimitError),
        (500, "INTERNAL", ProviderServerError),
        (503, "UNAVAILABLE", ProviderOverloadedError),
        (504, "DEADLINE_EXCEEDED", ProviderTimeoutError),
    ],
)
async def test_http_errors_map_by_status_keeping_the_api_s_message(
    status: int, rpc: str, error: type[ProviderError]
) -> None:
    provider, _ = mocked(json_response(error_body(status, rpc, "The thing failed."), status))
    with pytest.raises(error) as caught:
        await provider.complete(request())
    assert (caught.value.provider, caught.value.status_code) == ("google", status)
    assert "The thing failed." in caught.value.message
    assert caught.value.retryable is (status >= 429)


async def test_an_invalid_key_answered_400_is_an_authentication_error_naming_the_variables() -> (
    None
):
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
    }
    body = error_body(
        400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", info
    )
    provider, _ = mocked(json_response(body, 400))
    with pytest.raises(ProviderAuthenticationError) as caught:
        await provider.complete(request())
    assert "API key not valid" in caught.value.message
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in caught.value.message


async def test_a_404_names_the_model_and_the_url() -> None:
    message = "models/gemini-9 is not found for API version v1beta"
    provider, _ = mocked(json_response(error_body(404, "NOT_FOUND", message), 404))
    with pytest.raises(ModelNotFoundError) as caught:
        await provider.complete(request(model="gemini-9"))
    assert "model 'gemini-9' not found" in caught.value.message
    assert "models/gemini-9:generateContent" in caught.value.message


async def test_rate_limit_carries_retry_after_from_the_header() -> None:
    body = error_body(429, "RESOURCE_EXHAUSTED", "Slow down")
    provider, _ = mocked(json_response(body, 429, **{"retry-after": "7"}))
    with pytest.raises(RateLimitError) as caught:
        await provider.complete(request())
    assert caught.value.retry_after == 7.0


async def test_rate_limit_carries_retry_after_from_the_retry_info_detail() -> None:
    retry = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.5s"}
    body = error_body(429, "RESOURCE_EXHAUSTED", "Quota exceeded", retry)
    provider, _ = mocked(json_response(body, 429))
    with pytest.raises(RateLimitError) as caught:
        await provider.complete(request())
    assert caught.value.retry_after == 34.5


async def test_an_overloaded_503_is_retryable_with_its_wait() -> None:
    body = error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
    provider, _ = mocked(json_response(body, 503, **{"retry-after": "2"}))
    with pytest.raises(ProviderOverloadedError) as caught:
        await provider.complete(request())
    assert (caught.value.retryable, caught.value.retry_after) == (True, 2.0)


async def test_an_error_body_that_is_not_json_is_quoted() -> None:
    provider, _ = mocked(httpx.Response(502, content=b"<html>Bad Gateway</html>"))
    with pytest.raises(ProviderServerError, match="unexpected error body '<html>Bad Gateway"):
        await provider.complete(request())


async def test_an_error_envelope_in_a_200_is_not_read_as_an_answer() -> None:
    body = error_body(500, "INTERNAL", "Internal error encountered.")
    provider, _ = mocked(json_response(body))
    with pytest.raises(ProviderServerError, match="Internal error encountered"):
        await provider.complete(request())


async def test_a_body_that_is_not_json_is_a_response_error_quoting_it() -> None:
    provider, _ = mocked(httpx.Response(200, content=b"<html>oops</html>"))
    with pytest.raises(ProviderResponseError, match="expected a JSON GenerateContentResponse"):
        await provider.complete(request())


async def test_a_body_nested_past_what_python_parses_is_a_response_error() -> None:
    provider, _ = mocked(httpx.Response(200, content=b"[" * 100_000 + b"]" * 100_000))
    with pytest.raises(ProviderResponseError):
        await provider.complete(request())


async def test_a_network_failure_is_a_retryable_connection_error() -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    provider, _ = mocked(fail)
    with pytest.raises(ProviderConnectionError, match="could not be reached"):
        await provider.complete(request())


async def test_a_read_timeout_is_a_timeout_error() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow")

    provider, _ = mocked(slow)
    with pytest.raises(ProviderTimeoutError):
        await provider.complete(request())


async def test_missing_key_fails_at_the_first_call_naming_both_variables() -> None:
    provider, recorder = mocked(api_key=None)
    with pytest.raises(ProviderAuthenticationError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        await provider.complete(request())
    assert recorder.requests == []


async def test_a_proxy_base_url_needs_no_key_unless_told() -> None:
    provider, recorder = mocked(api_key=None, base_url="https://proxy.example.com/v1beta")
    await provider.complete(request())
    assert "x-goog-api-key" not in recorder.requests[0].headers
    strict, _ = mocked(api_key=None, base_url="https://proxy.example.com", require_api_key=True)
    with pytest.raises(ProviderAuthenticationError):
        await strict.complete(request())


async def test_an_error_echoing_the_key_is_scrubbed() -> None:
    body = error_body(400, "INVALID_ARGUMENT", f"Bad key {KEY} in request")
    provider, _ = mocked(json_response(body, 400))
    with pytest.raises(InvalidRequestError) as caught:
        await provider.complete(request())
    assert KEY not in str(caught.value) and "[REDACTED]" in str(caught.value)


async def test_a_value_json_cannot_hold_in_extra_is_an_invalid_request() -> None:
    provider, recorder = mocked()
    with pytest.raises(InvalidRequestError, match="not valid JSON"):
        await provider.complete(request(extra={"generationConfig": {"temperature": float("nan")}}))
    assert recorder.requests == []
