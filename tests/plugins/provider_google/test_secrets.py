"""The API key never shows: not in the URL, a repr, a log line, an error or an answer."""

from __future__ import annotations

import logging

import httpx
import pytest

from neuron_provider_google import GoogleProvider
from neuron_turn.loop.provider_errors import ProviderConnectionError, ProviderError

from ._support import KEY, call, json_response, mocked, request, response, sse, text


async def test_the_key_is_sent_in_its_header_and_never_in_the_url() -> None:
    provider, recorder = mocked()
    await provider.complete(request())
    streamed, stream_recorder = mocked(sse(response(text("Hi"))))
    [event async for event in streamed.stream(request())]
    for sent in (*recorder.requests, *stream_recorder.requests):
        assert sent.headers["x-goog-api-key"] == KEY
        assert KEY not in str(sent.url)


async def test_no_log_line_holds_the_key_even_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    provider, _ = mocked(json_response(response(text(f"echo {KEY}"))))
    with caplog.at_level(logging.DEBUG):
        answer = await provider.complete(request())
    assert KEY not in caplog.text
    assert KEY not in repr(answer)


async def test_an_answer_echoing_the_key_in_a_call_s_arguments_is_scrubbed() -> None:
    provider, _ = mocked(json_response(response(call("send", {"note": f"my key is {KEY}"}))))
    answer = await provider.complete(request())
    assert KEY not in repr(answer.content)


async def test_a_transport_error_quoting_the_key_is_scrubbed() -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused while sending {request.headers['x-goog-api-key']}")

    provider, _ = mocked(fail)
    with pytest.raises(ProviderConnectionError) as caught:
        await provider.complete(request())
    assert KEY not in str(caught.value)


async def test_a_key_from_the_environment_is_scrubbed_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    body = {
        "error": {"code": 403, "message": f"key {KEY} is blocked", "status": "PERMISSION_DENIED"}
    }
    provider, _ = mocked(json_response(body, 403), api_key=None)
    with pytest.raises(ProviderError) as caught:
        await provider.complete(request())
    assert KEY not in str(caught.value)


async def test_a_secret_header_given_by_the_caller_is_scrubbed() -> None:
    token = "proxy-token-0123456789"
    body = {"error": {"code": 400, "message": f"bad token {token}", "status": "INVALID_ARGUMENT"}}
    provider, recorder = mocked(json_response(body, 400), headers={"x-proxy-token": token})
    with pytest.raises(ProviderError) as caught:
        await provider.complete(request())
    assert recorder.requests[0].headers["x-proxy-token"] == token
    assert token not in str(caught.value)


def test_repr_shows_a_placeholder_for_the_key() -> None:
    assert "[REDACTED]" in repr(GoogleProvider("gemini-2.5-flash", api_key=KEY))
    assert KEY not in repr(GoogleProvider("gemini-2.5-flash", api_key=KEY))
