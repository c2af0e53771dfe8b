from __future__ import annotations

import json

import httpx
import pytest

from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    NonRetryableProviderError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloadedError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)

from ._support import API_KEY, MODEL, FakeApi, error_body, message_json, raising, reply, request


async def failure(api: FakeApi) -> ProviderError:
    provider = api.provider()
    with pytest.raises(ProviderError) as caught:
        await provider.complete(request())
    return caught.value


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (400, "invalid_request_error", InvalidRequestError),
        (413, "request_too_large", InvalidRequestError),
        (422, "invalid_request_error", InvalidRequestError),
        (401, "authentication_error", ProviderAuthenticationError),
        (403, "permission_error", ProviderAuthenticationError),
        (402, "billing_error", NonRetryableProviderError),
        (404, "not_found_error", ModelNotFoundError),
        (408, "timeout_error", ProviderTimeoutError),
        (429, "rate_limit_error", RateLimitError),
        (500, "api_error", ProviderServerError),
        (502, "api_error", ProviderServerError),
        (504, "timeout_error", ProviderTimeoutError),
        (503, "api_error", ProviderOverloadedError),
        (529, "overloaded_error", ProviderOverloadedError),
        (500, "overloaded_error", ProviderOverloadedError),
    ],
)
async def test_status_and_error_type_map_to_the_provider_error_class(
    status: int, kind: str, expected: type[ProviderError]
) -> None:
    error = await failure(FakeApi(reply(error_body(kind, "details here"), status=status)))

    assert type(error) is expected
    assert error.status_code == status
    assert error.provider == "anthropic"
    assert "details here" in error.message


async def test_invalid_request_keeps_the_apis_message() -> None:
    message = "messages.0.content: Input should be a valid list"
    error = await failure(FakeApi(reply(error_body("invalid_request_error", message), status=400)))

    assert isinstance(error, InvalidRequestError)
    assert not error.retryable
    assert message in str(error)


async def test_not_found_names_the_model_asked_for() -> None:
    body = error_body("not_found_error", "model: claude-sonet-4-5")
    api = FakeApi(reply(body, status=404))

    with pytest.raises(ModelNotFoundError, match=r"model 'claude-sonet-4-5' not found"):
        await api.provider().complete(request(model="claude-sonet-4-5"))


async def test_rate_limit_is_retryable_with_retry_after_from_the_header() -> None:
    body = error_body("rate_limit_error", "Number of requests has exceeded your rate limit")
    error = await failure(FakeApi(reply(body, status=429, headers={"retry-after": "17"})))

    assert isinstance(error, RateLimitError)
    assert error.retryable
    assert error.retry_after == 17.0


async def test_rate_limit_without_retry_after_waits_for_the_earliest_reset() -> None:
    headers = {
        "date": "Sun, 22 Nov 2026 09:00:00 GMT",
        "anthropic-ratelimit-requests-reset": "2026-11-22T09:00:30Z",
        "anthropic-ratelimit-output-tokens-reset": "2026-11-22T09:00:04Z",
    }
    error = await failure(
        FakeApi(reply(error_body("rate_limit_error", "slow"), status=429, headers=headers))
    )

    assert error.retry_after == 4.0


async def test_spend_limit_429_is_not_retryable() -> None:
    body = error_body("rate_limit_error", "You have reached your spend limit.")
    body["error"]["details"] = {"error_code": "enforced_spend_limit_reached"}
    error = await failure(FakeApi(reply(body, status=429, headers={"retry-after": "60"})))

    assert type(error) is NonRetryableProviderError
    assert error.retry_after is None


async def test_overloaded_keeps_retry_after_when_the_api_sends_one() -> None:
    api = FakeApi(
        reply(
            error_body("overloaded_error", "Overloaded"), status=529, headers={"retry-after": "2"}
        )
    )
    error = await failure(api)

    assert isinstance(error, ProviderOverloadedError)
    assert error.retry_after == 2.0


async def test_non_json_error_body_is_quoted_briefly() -> None:
    page = "<html><body>" + "Bad gateway " * 100 + "</body></html>"
    error = await failure(FakeApi(reply(page, status=502)))

    assert isinstance(error, ProviderServerError)
    assert "<html><body>Bad gateway" in error.message
    assert len(error.message) < 300


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (httpx.ConnectTimeout("connect timed out"), ProviderTimeoutError),
        (httpx.ReadTimeout("read timed out"), ProviderTimeoutError),
        (httpx.WriteTimeout("write timed out"), ProviderTimeoutError),
        (httpx.PoolTimeout("pool timed out"), ProviderTimeoutError),
        (httpx.ConnectError("connection refused"), ProviderConnectionError),
        (httpx.ReadError("connection reset"), ProviderConnectionError),
        (httpx.RemoteProtocolError("peer closed connection"), ProviderConnectionError),
        (
            httpx.UnsupportedProtocol("Request URL has an unsupported protocol 'ftp://'"),
            InvalidRequestError,
        ),
        (httpx.DecodingError("gzip broken"), ProviderResponseError),
    ],
)
async def test_transport_failures_map_to_provider_errors_never_httpx(
    exc: Exception, expected: type[ProviderError]
) -> None:
    error = await failure(FakeApi(raising(exc)))

    assert type(error) is expected
    assert error.__cause__ is exc
    assert not isinstance(error, httpx.HTTPError)


async def test_timeouts_and_connection_errors_are_retryable() -> None:
    timeout = await failure(FakeApi(raising(httpx.ReadTimeout("slow"))))
    refused = await failure(FakeApi(raising(httpx.ConnectError("refused"))))

    assert timeout.retryable and refused.retryable
    assert isinstance(timeout, TimeoutError)


@pytest.mark.parametrize(
    "body",
    [
        "<html>Service temporarily unavailable</html>",
        "",
        '{"type": "message", "content": "not a list"}',
        "[1, 2, 3]",
    ],
)
async def test_200_with_an_unexpected_body_is_a_response_error_quoting_its_start(body: str) -> None:
    error = await failure(FakeApi(reply(body)))

    assert isinstance(error, ProviderResponseError)
    assert error.status_code == 200
    assert repr(body[:40])[1:-1] in error.message


async def test_200_body_quote_is_at_most_200_characters() -> None:
    body = "x" * 1000
    error = await failure(FakeApi(reply(body)))

    assert "x" * 200 in error.message
    assert "x" * 201 not in error.message


async def test_error_streamed_after_a_200_maps_by_its_type() -> None:
    start = {"type": "message_start", "message": message_json(content=())}
    events = [
        start,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    api = FakeApi(reply(text, headers={"content-type": "text/event-stream; charset=utf-8"}))

    error = await failure(api)

    assert isinstance(error, ProviderOverloadedError)
    assert "Overloaded" in error.message


async def test_api_key_echoed_in_an_error_body_is_redacted() -> None:
    body = error_body("authentication_error", f"invalid x-api-key: {API_KEY}")
    error = await failure(FakeApi(reply(body, status=401)))

    assert API_KEY not in str(error)
    assert "[REDACTED]" in str(error)


async def test_api_key_straddling_the_quote_limit_is_redacted_whole() -> None:
    body = "y" * 190 + API_KEY
    error = await failure(FakeApi(reply(body, status=502)))

    assert API_KEY[:10] not in error.message


async def test_api_key_echoed_in_a_transport_error_is_redacted() -> None:
    error = await failure(FakeApi(raising(httpx.ConnectError(f"proxy said: bad key {API_KEY}"))))

    assert API_KEY not in str(error)


async def test_model_is_named_in_the_not_found_message_for_the_providers_default_model() -> None:
    api = FakeApi(reply(error_body("not_found_error", f"model: {MODEL}"), status=404))
    error = await failure(api)

    assert f"model {MODEL!r} not found" in error.message


async def test_an_error_body_nested_past_the_parser_keeps_its_status_class() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    error = await failure(FakeApi(reply(deep, status=500)))

    assert type(error) is ProviderServerError and error.status_code == 500
