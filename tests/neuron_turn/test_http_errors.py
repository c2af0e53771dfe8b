"""The HTTP-provider error handling plugins share: redaction, quotes, waits, statuses, httpx."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from layer0 import Base64Source, UrlSource
from neuron_turn.loop.http_errors import (
    REDACTED,
    body_prefix,
    error_class_for_status,
    redact,
    redact_response,
    retry_after,
    seconds_until,
    transport_errors,
)
from neuron_turn.loop.provider import (
    DocumentPart,
    ImagePart,
    ProviderResponse,
    RawPart,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)
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

KEY = "sk-test-0123456789abcdef"
NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
DATE = "Sun, 22 Nov 2026 12:00:00 GMT"


# --- redact -----------------------------------------------------------------------


def test_redact_replaces_every_occurrence_of_every_secret() -> None:
    text = f"key {KEY}, again {KEY}, token tok-1"

    assert redact(text, (KEY, "tok-1")) == f"key {REDACTED}, again {REDACTED}, token {REDACTED}"


def test_redact_skips_empty_and_missing_secrets() -> None:
    assert redact("nothing to hide", ("", None)) == "nothing to hide"


def test_redact_hides_a_secret_containing_another_whole() -> None:
    assert redact(f"key {KEY}", (KEY[:6], KEY)) == f"key {REDACTED}"


def test_redact_takes_a_single_string_as_one_secret_not_its_characters() -> None:
    assert redact(f"a key {KEY}", KEY) == f"a key {REDACTED}"


# --- body_prefix ------------------------------------------------------------------


def test_body_prefix_cuts_at_the_limit() -> None:
    assert body_prefix("x" * 1000) == "x" * 200
    assert body_prefix("abcdef", limit=3) == "abc"


def test_body_prefix_decodes_bytes_replacing_what_is_not_utf8() -> None:
    assert body_prefix(b"caf\xc3\xa9 \xff") == "café \ufffd"


def test_body_prefix_redacts_before_cutting_so_no_part_of_a_key_survives() -> None:
    quoted = body_prefix("y" * 190 + KEY, secrets=(KEY,))

    assert KEY[:10] not in quoted
    assert quoted.startswith("y" * 190 + REDACTED[:10])


# --- retry_after ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after-ms": "bad", "retry-after": "4"}, 4.0),
    ],
)
def test_retry_after_reads_milliseconds_first_then_seconds(
    headers: dict[str, str], seconds: float
) -> None:
    assert retry_after(headers) == seconds


def test_retry_after_as_http_date_counts_from_now_without_a_date_header() -> None:
    assert retry_after({"retry-after": "Sun, 22 Nov 2026 12:00:30 GMT"}, now=NOW) == 30.0


def test_retry_after_as_http_date_counts_from_the_date_header() -> None:
    headers = {
        "retry-after": "Sun, 22 Nov 2026 10:00:30 GMT",
        "date": "Sun, 22 Nov 2026 10:00:00 GMT",
    }

    assert retry_after(headers, now=NOW) == 30.0


@pytest.mark.parametrize(
    "headers",
    [
        {"retry-after": "-3"},
        {"retry-after-ms": "-10"},
        {"retry-after": "Sun, 22 Nov 2026 11:59:00 GMT"},
    ],
)
def test_retry_after_is_never_negative(headers: dict[str, str]) -> None:
    assert retry_after(headers, now=NOW) == 0.0


@pytest.mark.parametrize("value", ["soon", "nan", "inf", ""])
def test_unreadable_retry_after_is_passed_over(value: str) -> None:
    assert retry_after({"retry-after": value}, now=NOW) is None


def test_no_retry_header_means_unknown() -> None:
    assert retry_after({}) is None


def test_retry_after_reads_httpx_headers_whatever_their_case() -> None:
    assert retry_after(httpx.Headers({"Retry-After": "3"})) == 3.0


def test_seconds_until_counts_from_the_date_header_then_now() -> None:
    when = datetime(2026, 11, 22, 12, 0, 5, tzinfo=UTC)

    assert seconds_until(when, {"date": DATE}, now=datetime(2020, 1, 1, tzinfo=UTC)) == 5.0
    assert seconds_until(when, {}, now=NOW) == 5.0


def test_seconds_until_takes_naive_times_as_utc_and_never_goes_negative() -> None:
    assert seconds_until(datetime(2026, 11, 22, 12, 0, 5), {}, now=NOW) == 5.0
    assert seconds_until(datetime(2026, 11, 22, 11, 0, 0, tzinfo=UTC), {"date": DATE}) == 0.0


# --- error_class_for_status -------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, InvalidRequestError),
        (422, InvalidRequestError),
        (401, ProviderAuthenticationError),
        (403, ProviderAuthenticationError),
        (404, ModelNotFoundError),
        (408, ProviderTimeoutError),
        (504, ProviderTimeoutError),
        (409, ProviderServerError),
        (500, ProviderServerError),
        (502, ProviderServerError),
        (599, ProviderServerError),
        (429, RateLimitError),
        (503, ProviderOverloadedError),
        (529, ProviderOverloadedError),
        (402, InvalidRequestError),
        (413, InvalidRequestError),
        (451, InvalidRequestError),
    ],
)
def test_error_status_maps_to_the_common_class(status: int, cls: type[ProviderError]) -> None:
    assert error_class_for_status(status) is cls


@pytest.mark.parametrize("status", [101, 200, 204, 302, 600])
def test_status_that_is_not_an_error_is_an_unexpected_response(status: int) -> None:
    assert error_class_for_status(status) is ProviderResponseError


# --- transport_errors -------------------------------------------------------------


def raised_from(exc: Exception, **options: str) -> ProviderError:
    with pytest.raises(ProviderError) as caught, transport_errors(provider="acme", **options):
        raise exc
    assert caught.value.__cause__ is exc
    assert caught.value.provider == "acme"
    return caught.value


@pytest.mark.parametrize(
    ("exc", "cls"),
    [
        (httpx.ConnectTimeout("connect timed out"), ProviderTimeoutError),
        (httpx.ReadTimeout("read timed out"), ProviderTimeoutError),
        (httpx.WriteTimeout("write timed out"), ProviderTimeoutError),
        (httpx.PoolTimeout("pool timed out"), ProviderTimeoutError),
        (httpx.ConnectError("connection refused"), ProviderConnectionError),
        (httpx.ReadError("connection reset"), ProviderConnectionError),
        (httpx.WriteError("broken pipe"), ProviderConnectionError),
        (httpx.RemoteProtocolError("peer closed connection"), ProviderConnectionError),
        (httpx.LocalProtocolError("bad header"), ProviderConnectionError),
        (httpx.ProxyError("proxy refused"), ProviderConnectionError),
        (httpx.StreamClosed(), ProviderConnectionError),
    ],
)
def test_timeouts_and_network_failures_become_retryable_provider_errors(
    exc: Exception, cls: type[ProviderError]
) -> None:
    error = raised_from(exc)

    assert type(error) is cls
    assert error.retryable


def test_a_timeout_is_also_a_builtin_timeout_error_named_in_the_message() -> None:
    error = raised_from(httpx.ReadTimeout("slow"), what="the Acme API at https://acme.test")

    assert isinstance(error, TimeoutError)
    assert error.message == "the Acme API at https://acme.test timed out (ReadTimeout: slow)"


@pytest.mark.parametrize(
    "exc",
    [
        httpx.UnsupportedProtocol("Request URL is missing an 'http://' prefix"),
        httpx.InvalidURL("bad"),
    ],
)
def test_url_httpx_cannot_call_is_an_invalid_request(exc: Exception) -> None:
    error = raised_from(exc)

    assert type(error) is InvalidRequestError
    assert not error.retryable


def test_body_that_cannot_be_decoded_is_a_response_error() -> None:
    error = raised_from(httpx.DecodingError("bad gzip"))

    assert type(error) is ProviderResponseError


def test_status_error_maps_by_its_status_with_retry_after() -> None:
    request = httpx.Request("POST", "https://acme.test/v1/chat")
    response = httpx.Response(429, headers={"retry-after": "7"}, request=request)
    exc = httpx.HTTPStatusError("429 Too Many Requests", request=request, response=response)

    error = raised_from(exc)

    assert type(error) is RateLimitError
    assert error.status_code == 429
    assert error.retry_after == 7.0


def test_transport_messages_name_what_was_called_default_the_provider() -> None:
    assert raised_from(httpx.ConnectError("refused")).message.startswith(
        "acme could not be reached"
    )


def test_transport_messages_never_contain_a_secret() -> None:
    error = raised_from(
        httpx.ConnectError(f"proxy said: bad key {KEY}"),
        what=f"https://acme.test/?key={KEY}",
        secrets=KEY,
    )

    assert KEY not in error.message
    assert REDACTED in error.message


def test_other_exceptions_pass_through_untouched() -> None:
    original = KeyError("not ours")

    with pytest.raises(KeyError) as caught, transport_errors(provider="acme"):
        raise original

    assert caught.value is original


def test_redact_response_hides_a_key_in_every_string_of_the_answer() -> None:
    key = "sk-live-0123456789"
    deep: Any = key
    for _ in range(5000):
        deep = {"k": [deep]}
    response = ProviderResponse(
        content=[
            TextPart(f"the key is {key}"),
            ToolUsePart("c1", "look", {key: f"x{key}", "deep": deep}),
            ThinkingPart(f"I saw {key}", signature="sig"),
            RawPart("p", {"list": [key]}),
        ],
        stop_reason="tool_use",
        model="m",
    )
    redacted = redact_response(response, [key])
    assert key not in repr(redacted.content[:1] + redacted.content[2:])
    tool_input = redacted.content[1].input  # type: ignore[union-attr]
    assert list(tool_input) == [REDACTED, "deep"] and tool_input[REDACTED] == f"x{REDACTED}"
    inner = tool_input["deep"]
    while isinstance(inner, dict):
        inner = inner["k"][0]
    assert inner == REDACTED
    assert redacted.content[2].signature == "sig"  # type: ignore[union-attr]


def test_redact_response_returns_the_same_answer_when_no_key_is_in_it() -> None:
    response = ProviderResponse(content=[TextPart("hello")], stop_reason="end_turn")
    assert redact_response(response, ["sk-live-0123456789"]) is response
    assert redact_response(response, [None, ""]) is response


def test_redact_response_hides_a_key_in_the_url_and_name_of_a_file() -> None:
    key = "sk-live-0123456789"
    data = Base64Source(data="c2stbGl2ZS0wMTIzNDU2Nzg5")  # the key in base64: not its text
    files = (
        ImagePart(UrlSource(url=f"https://example.com/a.png?key={key}"), "image/png"),
        DocumentPart(data, "application/pdf", f"{key}.pdf"),
    )
    response = ProviderResponse(
        content=[ToolResultPart("c1", "ok", files=files), files[0]], stop_reason="end_turn"
    )
    redacted = redact_response(response, [key])
    assert key not in repr(redacted.content)
    result = redacted.content[0]
    assert isinstance(result, ToolResultPart)
    assert result.files == (
        ImagePart(UrlSource(url=f"https://example.com/a.png?key={REDACTED}"), "image/png"),
        DocumentPart(data, "application/pdf", f"{REDACTED}.pdf"),
    )
    assert redacted.content[1] == result.files[0]
    clean = ProviderResponse(
        content=[ToolResultPart("c1", "ok", files=(files[1],))], stop_reason="end_turn"
    )
    assert redact_response(clean, ["another-key"]) is clean
