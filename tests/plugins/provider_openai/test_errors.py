"""HTTP statuses, headers, bodies and transport failures → provider errors (MockTransport)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from neuron_provider_openai._errors import parse_duration, retry_after
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


def openai_error(message: str, type_: str = "invalid_request_error", code: str | None = None):
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


async def fail(response: httpx.Response | object, **options: object) -> ProviderError:
    provider, _ = mocked(response, **options)  # type: ignore[arg-type]
    with pytest.raises(ProviderError) as info:
        await provider.complete(request())
    return info.value


# --- status table ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, InvalidRequestError),
        (401, ProviderAuthenticationError),
        (403, ProviderAuthenticationError),
        (404, ModelNotFoundError),
        (408, ProviderTimeoutError),
        (409, ProviderServerError),
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
async def test_status_maps_to_error_class(status: int, cls: type[ProviderError]) -> None:
    error = await fail(json_response(openai_error("boom"), status))
    assert type(error) is cls
    assert error.status_code == status
    assert error.provider == "openai"
    assert "boom" in error.message


async def test_bad_request_keeps_the_api_message_type_and_code() -> None:
    body = openai_error(
        "Unsupported value: 'messages[0].role' does not support 'developer' with this model.",
        code="unsupported_value",
    )
    error = await fail(json_response(body, 400))
    assert isinstance(error, InvalidRequestError)
    assert error.message == (
        "openai: HTTP 400 (invalid_request_error/unsupported_value): Unsupported value: "
        "'messages[0].role' does not support 'developer' with this model."
    )
    assert not error.retryable


async def test_not_found_names_the_model() -> None:
    body = openai_error("The model `gpt-5.2-proo` does not exist.", code="model_not_found")
    provider, _ = mocked(json_response(body, 404))
    with pytest.raises(ModelNotFoundError) as info:
        await provider.complete(request(model="gpt-5.2-proo"))
    assert "model 'gpt-5.2-proo' not found" in info.value.message
    assert "/chat/completions" in info.value.message
    assert isinstance(info.value, LookupError)


async def test_authentication_error_says_which_variable_to_check() -> None:
    error = await fail(json_response(openai_error("Incorrect API key provided"), 401))
    assert isinstance(error, ProviderAuthenticationError)
    assert "OPENAI_API_KEY" in error.message


async def test_insufficient_quota_429_is_not_retryable() -> None:
    body = openai_error(
        "You exceeded your current quota", "insufficient_quota", "insufficient_quota"
    )
    error = await fail(json_response(body, 429, **{"retry-after": "20"}))
    assert isinstance(error, ProviderAuthenticationError)
    assert not error.retryable
    assert error.retry_after is None


# --- retry_after ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"x-ratelimit-reset-requests": "20ms"}, 0.02),
        ({"x-ratelimit-reset-tokens": "6m0s"}, 360.0),
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, 360.0),
        (
            {
                "x-ratelimit-reset-requests": "1s",
                "x-ratelimit-reset-tokens": "6m0s",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-remaining-tokens": "1200",
            },
            1.0,
        ),
        ({}, None),
        ({"retry-after": "soon"}, None),
    ],
)
async def test_rate_limit_maps_to_retryable_error_with_retry_after(
    headers: dict[str, str], seconds: float | None
) -> None:
    error = await fail(
        json_response(openai_error("Rate limit reached", "requests"), 429, **headers)
    )
    assert isinstance(error, RateLimitError)
    assert error.retryable
    if seconds is None:
        assert error.retry_after is None
    else:
        assert error.retry_after == pytest.approx(seconds)


def test_retry_after_reads_an_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    seconds = retry_after(httpx.Headers({"retry-after": format_datetime(when, usegmt=True)}))
    assert seconds is not None
    assert 25 <= seconds <= 31


def test_retry_after_in_the_past_is_zero() -> None:
    when = datetime(2020, 1, 1, tzinfo=UTC)
    assert retry_after(httpx.Headers({"retry-after": format_datetime(when, usegmt=True)})) == 0.0


async def test_overloaded_503_keeps_retry_after() -> None:
    error = await fail(json_response(openai_error("overloaded"), 503, **{"retry-after": "3"}))
    assert isinstance(error, ProviderOverloadedError)
    assert error.retry_after == 3.0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1h2m3.5s", 3723.5),
        ("0s", 0.0),
        ("500us", 0.0005),
        ("12", 12.0),
        ("", None),
        ("1x", None),
        ("s", None),
        ("1s junk", None),
    ],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


# --- other error dialects ---------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"error": "model 'llama9' not found"}, "model 'llama9' not found"),
        ({"object": "error", "message": "bad max_tokens", "code": 400}, "bad max_tokens"),
        ({"detail": "Not authenticated"}, "Not authenticated"),
        ({"detail": [{"loc": ["body", "messages"], "msg": "field required"}]}, "field required"),
        (
            {
                "error": {
                    "code": 429,
                    "message": "Provider returned error",
                    "metadata": {"raw": "slow down"},
                }
            },
            "Provider returned error: slow down",
        ),
    ],
)
async def test_compatible_server_error_bodies_are_read(body: object, expected: str) -> None:
    error = await fail(json_response(body, 400))
    assert expected in error.message


async def test_error_body_that_is_not_json_is_quoted_briefly() -> None:
    html = "<html>" + "x" * 5000 + "</html>"
    error = await fail(httpx.Response(502, text=html))
    assert isinstance(error, ProviderServerError)
    assert "<html>xxx" in error.message
    assert len(error.message) < 300


async def test_empty_error_body_uses_the_reason_phrase() -> None:
    error = await fail(httpx.Response(500))
    assert error.message == "openai: HTTP 500: Internal Server Error"


# --- 200s that are not completions ------------------------------------------------


async def test_200_with_non_json_body_is_a_response_error_quoting_a_prefix() -> None:
    error = await fail(httpx.Response(200, text="upstream proxy says hi " + "y" * 400))
    assert isinstance(error, ProviderResponseError)
    assert "upstream proxy says hi" in error.message
    quoted = error.message.split("got ", 1)[1]
    assert len(quoted) <= 202  # 200 characters and the quotes


async def test_200_with_json_that_is_not_a_completion_is_a_response_error() -> None:
    error = await fail(json_response({"object": "list", "data": []}))
    assert isinstance(error, ProviderResponseError)
    assert "no choices" in error.message
    assert '\'{"object"' in error.message


async def test_200_carrying_an_error_with_an_http_code_is_mapped_by_that_code() -> None:
    body = {"error": {"code": 502, "message": "upstream failed"}}
    error = await fail(json_response(body))
    assert isinstance(error, ProviderServerError)
    assert error.status_code == 502
    assert "upstream failed" in error.message


async def test_200_carrying_an_error_without_a_code_is_a_response_error() -> None:
    error = await fail(json_response({"error": {"message": "weird"}}))
    assert isinstance(error, ProviderResponseError)


# --- transport ------------------------------------------------------------------


def raising(exc: Exception):
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return handler


@pytest.mark.parametrize(
    ("exc", "cls"),
    [
        (httpx.ConnectTimeout("connect timed out"), ProviderTimeoutError),
        (httpx.ReadTimeout("read timed out"), ProviderTimeoutError),
        (httpx.WriteTimeout("write timed out"), ProviderTimeoutError),
        (httpx.PoolTimeout("pool timed out"), ProviderTimeoutError),
        (httpx.ConnectError("connection refused"), ProviderConnectionError),
        (httpx.ReadError("connection reset"), ProviderConnectionError),
        (httpx.RemoteProtocolError("server disconnected"), ProviderConnectionError),
    ],
)
async def test_transport_failures_are_retryable_provider_errors(
    exc: Exception, cls: type[ProviderError]
) -> None:
    error = await fail(raising(exc))
    assert type(error) is cls
    assert error.retryable
    assert isinstance(error.__cause__, httpx.HTTPError)
    assert "api.openai.com" in error.message


async def test_timeout_is_also_a_builtin_timeout_error() -> None:
    error = await fail(raising(httpx.ReadTimeout("slow")))
    assert isinstance(error, TimeoutError)
    assert "ReadTimeout" in error.message


async def test_url_without_a_scheme_is_an_invalid_request_not_retried() -> None:
    error = await fail(raising(httpx.UnsupportedProtocol("no scheme")))
    assert isinstance(error, InvalidRequestError)
    assert not error.retryable
    assert "api.openai.com" in error.message


async def test_no_httpx_exception_escapes_even_for_decoding_errors() -> None:
    error = await fail(raising(httpx.DecodingError("bad gzip")))
    assert isinstance(error, ProviderResponseError)


async def test_error_messages_never_contain_the_key() -> None:
    echoed = openai_error(f"Incorrect API key provided: {KEY}.", code="invalid_api_key")
    auth = await fail(json_response(echoed, 401))
    transport = await fail(raising(httpx.ConnectError(f"failed for {KEY}")))
    garbage = await fail(httpx.Response(200, text=f"echo {KEY}"))
    for error in (auth, transport, garbage):
        assert KEY not in str(error)
        assert "[REDACTED]" in str(error)
