from __future__ import annotations

import httpx
import pytest

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

from ._support import Handler, provider_with, user_request


def answering_status(
    status: int, body: str | bytes, headers: dict[str, str] | None = None
) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers=headers)

    return handler


async def error_for(
    status: int, body: str | bytes = '{"error":"boom"}', headers: dict[str, str] | None = None
) -> ProviderError:
    provider = provider_with(answering_status(status, body, headers))
    with pytest.raises(ProviderError) as info:
        await provider.complete(user_request(model="llama3.2"))
    return info.value


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, InvalidRequestError),
        (401, ProviderAuthenticationError),
        (403, ProviderAuthenticationError),
        (404, ModelNotFoundError),
        (408, ProviderTimeoutError),
        (413, InvalidRequestError),
        (422, InvalidRequestError),
        (429, RateLimitError),
        (500, ProviderServerError),
        (502, ProviderServerError),
        (503, ProviderOverloadedError),
        (504, ProviderTimeoutError),
        (529, ProviderOverloadedError),
    ],
)
async def test_status_maps_to_error_class(status: int, expected: type[ProviderError]) -> None:
    error = await error_for(status)
    assert type(error) is expected
    assert error.status_code == status
    assert error.provider == "ollama"


async def test_bad_request_keeps_the_api_message() -> None:
    error = await error_for(400, '{"error":"invalid options: num_ctx must be a number"}')
    assert isinstance(error, InvalidRequestError)
    assert not error.retryable
    assert "invalid options: num_ctx must be a number" in error.message


async def test_model_not_pulled_names_the_model_and_suggests_ollama_pull() -> None:
    error = await error_for(404, '{"error":"model \\"llama3.2\\" not found, try pulling it first"}')
    assert isinstance(error, ModelNotFoundError)
    assert "'llama3.2'" in error.message
    assert "ollama pull llama3.2" in error.message
    assert 'model "llama3.2" not found' in error.message


async def test_plain_404_means_base_url_is_not_an_ollama_server() -> None:
    error = await error_for(404, "404 page not found")
    assert isinstance(error, InvalidRequestError)
    assert "/api/chat does not exist" in error.message


async def test_unauthorized_says_which_variable_to_set() -> None:
    error = await error_for(401, '{"error":"unauthorized"}')
    assert "OLLAMA_API_KEY" in error.message
    assert "unauthorized" in error.message


async def test_rate_limit_carries_retry_after_seconds() -> None:
    error = await error_for(429, '{"error":"too many requests"}', {"retry-after": "7"})
    assert isinstance(error, RateLimitError)
    assert error.retryable
    assert error.retry_after == 7.0


async def test_retry_after_ms_wins_over_retry_after() -> None:
    error = await error_for(429, "{}", {"retry-after-ms": "1500", "retry-after": "9"})
    assert error.retry_after == 1.5


async def test_overloaded_queue_carries_retry_after() -> None:
    error = await error_for(503, '{"error":"server busy, please try again"}', {"retry-after": "2"})
    assert isinstance(error, ProviderOverloadedError)
    assert error.retry_after == 2.0
    assert "server busy" in error.message


async def test_non_retryable_errors_carry_no_retry_after() -> None:
    error = await error_for(400, "{}", {"retry-after": "5"})
    assert error.retry_after is None


async def test_ok_status_with_non_json_body_is_a_response_error_quoting_a_prefix() -> None:
    error = await error_for(200, "<html>" + "x" * 500 + "</html>")
    assert isinstance(error, ProviderResponseError)
    assert "<html>xxx" in error.message
    assert len(error.message) < 300


async def test_ok_status_with_wrong_json_shape_is_a_response_error() -> None:
    error = await error_for(200, '{"models": []}')
    assert isinstance(error, ProviderResponseError)
    assert '{"models": []}' in error.message


def raising(exc: Exception) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return handler


async def transport_error(exc: Exception) -> ProviderError:
    provider = provider_with(raising(exc))
    with pytest.raises(ProviderError) as info:
        await provider.complete(user_request())
    assert info.value.__cause__ is exc
    return info.value


async def test_connection_refused_says_no_ollama_server_and_how_to_fix() -> None:
    error = await transport_error(httpx.ConnectError("[Errno 111] Connection refused"))
    assert isinstance(error, ProviderConnectionError)
    assert error.retryable
    assert "no Ollama server at http://localhost:11434" in error.message
    assert "ollama serve" in error.message
    assert "OLLAMA_HOST" in error.message


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ConnectTimeout("connect timed out"),
        httpx.ReadTimeout("read timed out"),
        httpx.WriteTimeout("write timed out"),
        httpx.PoolTimeout("pool timed out"),
    ],
)
async def test_timeouts_map_to_retryable_timeout_error(exc: Exception) -> None:
    error = await transport_error(exc)
    assert isinstance(error, ProviderTimeoutError)
    assert isinstance(error, TimeoutError)
    assert error.retryable


@pytest.mark.parametrize(
    "exc",
    [httpx.ReadError("reset by peer"), httpx.RemoteProtocolError("server hung up")],
)
async def test_network_errors_map_to_retryable_connection_error(exc: Exception) -> None:
    error = await transport_error(exc)
    assert isinstance(error, ProviderConnectionError)
    assert error.retryable


async def test_undecodable_body_maps_to_response_error() -> None:
    error = await transport_error(httpx.DecodingError("bad gzip"))
    assert isinstance(error, ProviderResponseError)
