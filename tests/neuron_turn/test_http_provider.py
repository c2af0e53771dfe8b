"""`HttpProvider`: the shared skeleton of a provider over an HTTP JSON API."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import ClassVar

import httpx
import pytest
from moneyed import Money
from pydantic import JsonValue

from neuron_turn.loop.events import ProviderDelta, TextDelta
from neuron_turn.loop.hosted_tools import HostedToolCall
from neuron_turn.loop.http_provider import (
    ErrorContext,
    HttpProvider,
    quote_prefix,
    status_error,
    unexpected_error_body,
)
from neuron_turn.loop.provider import (
    ContentPart,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    StopReason,
    TextPart,
    TokenUsage,
)
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
    RateLimitError,
)

KEY = "sk-test-0123456789"


@dataclass(frozen=True)
class _Answer:
    content: list[ContentPart]
    stop_reason: StopReason = "end_turn"
    usage: TokenUsage = field(default_factory=TokenUsage)
    model: str = "m"
    hosted_calls: tuple[HostedToolCall, ...] = ()


class _FreePricer:
    def cost(self, usage: TokenUsage, *, model: str, requested_model: str) -> Money | None:
        return None


class _Reader:
    def __init__(self) -> None:
        self.text = ""
        self.done = False


class _EchoProvider(HttpProvider[_Answer, _Reader]):
    """Answers `{"text": ...}`; streams `data: <text>` lines ending with `data: [DONE]`."""

    name: ClassVar[str] = "echo"
    default_base_url: ClassVar[str] = "https://echo.example/v1"
    api_key_envs: ClassVar[tuple[str, ...]] = ("ECHO_KEY", "ECHO_OTHER_KEY")
    api_key_header: ClassVar[str] = "x-echo-key"
    api_key_prefix: ClassVar[str] = ""

    def __init__(self, model: str = "", **options: object) -> None:
        super().__init__(model, **options)  # type: ignore[arg-type]
        self._pricer = _FreePricer()
        self._url = httpx.URL(f"{self.base_url}/answer")

    def request_body(self, request: ProviderRequest) -> dict[str, JsonValue]:
        return {"model": request.model or self.model, **request.extra}

    def _endpoint(self, model: str, *, stream: bool) -> httpx.URL | str:
        return self._url

    def _read_body(self, data: object, content: bytes, context: ErrorContext) -> _Answer:
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            raise self._bad_body("an echo", content, context)
        return _Answer([TextPart(data["text"])])

    def _event_reader(self) -> _Reader:
        return _Reader()

    async def _deltas(
        self, response: httpx.Response, reader: _Reader, context: ErrorContext
    ) -> AsyncIterator[ProviderDelta]:
        async for line in response.aiter_lines():
            data = line.removeprefix("data: ")
            if data == "[DONE]":
                reader.done = True
            elif data:
                reader.text += data
                yield TextDelta(data)

    def _finish_stream(self, reader: _Reader, context: ErrorContext) -> _Answer:
        if not reader.done:
            raise self._cut_off(context, 1, "[DONE]")
        return _Answer([TextPart(reader.text)])

    def _error_from_response(
        self, response: httpx.Response, context: ErrorContext
    ) -> ProviderError:
        body = quote_prefix(response.content, context.secrets)
        return ProviderResponseError(
            f"{self.name}: HTTP {response.status_code}: {body}",
            provider=self.name,
            status_code=response.status_code,
        )


def _request(**extra: JsonValue) -> ProviderRequest:
    return ProviderRequest(
        model="m", messages=[ProviderMessage("user", [TextPart("hi")])], extra=extra
    )


def _provider(handler: httpx.MockTransport, **options: object) -> _EchoProvider:
    return _EchoProvider("m", api_key=KEY, client=httpx.AsyncClient(transport=handler), **options)


async def test_complete_sends_the_key_in_the_configured_header_and_reads_the_answer() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"text": "hello"})

    response = await _provider(httpx.MockTransport(answer)).complete(_request())
    assert isinstance(response, ProviderResponse)
    assert response.content == [TextPart("hello")]
    assert seen[0].headers["x-echo-key"] == KEY
    assert str(seen[0].url) == "https://echo.example/v1/answer"
    assert json.loads(seen[0].content) == {"model": "m"}


async def test_the_key_comes_from_the_first_set_environment_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ECHO_KEY", raising=False)
    monkeypatch.setenv("ECHO_OTHER_KEY", "from-env")
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"text": "ok"})

    client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    await _EchoProvider("m", client=client).complete(_request())
    assert seen[0].headers["x-echo-key"] == "from-env"


async def test_a_missing_key_for_the_default_url_names_every_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ECHO_KEY", raising=False)
    monkeypatch.delenv("ECHO_OTHER_KEY", raising=False)
    provider = _EchoProvider("m", client=httpx.AsyncClient())
    with pytest.raises(ProviderAuthenticationError, match="ECHO_KEY or ECHO_OTHER_KEY"):
        await provider.complete(_request())


async def test_an_error_body_echoing_the_key_is_scrubbed() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, text=f"bad key {KEY}")

    with pytest.raises(ProviderResponseError) as info:
        await _provider(httpx.MockTransport(answer)).complete(_request())
    assert KEY not in str(info.value)
    assert "[REDACTED]" in str(info.value)


async def test_a_body_that_is_not_json_is_a_response_error_quoting_its_start() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>")

    with pytest.raises(ProviderResponseError, match="expected a JSON answer, got '<html>'"):
        await _provider(httpx.MockTransport(answer)).complete(_request())


async def test_a_value_json_cannot_hold_is_an_invalid_request() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        raise AssertionError("nothing is sent")

    with pytest.raises(InvalidRequestError, match="not valid JSON"):
        await _provider(httpx.MockTransport(answer)).complete(_request(x=float("nan")))


async def test_stream_yields_deltas_then_the_response() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = "data: he\n\ndata: llo\n\ndata: [DONE]\n\n"
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    events = [event async for event in _provider(httpx.MockTransport(answer)).stream(_request())]
    assert events[:2] == [TextDelta("he"), TextDelta("llo")]
    assert isinstance(events[-1], ProviderResponse)
    assert events[-1].content == [TextPart("hello")]


async def test_a_stream_cut_off_before_its_end_is_a_retryable_connection_error() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, text="data: he\n\n", headers={"content-type": "text/event-stream"}
        )

    with pytest.raises(ProviderConnectionError, match="cut off") as info:
        [event async for event in _provider(httpx.MockTransport(answer)).stream(_request())]
    assert info.value.retryable


async def test_a_stream_answered_in_one_piece_still_yields_its_deltas() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"text": "whole"})

    events = [event async for event in _provider(httpx.MockTransport(answer)).stream(_request())]
    assert isinstance(events[-1], ProviderResponse)
    assert any(isinstance(event, TextDelta) for event in events[:-1])


async def test_the_repr_hides_the_key_and_aclose_leaves_an_injected_client_open() -> None:
    client = httpx.AsyncClient()
    async with _EchoProvider("m", api_key=KEY, client=client) as provider:
        assert KEY not in repr(provider)
        assert repr(provider).startswith("_EchoProvider(model='m'")
    assert not client.is_closed
    await client.aclose()


async def test_an_injected_client_closed_by_its_owner_is_a_connection_error() -> None:
    client = httpx.AsyncClient()
    await client.aclose()
    with pytest.raises(ProviderConnectionError, match="closed"):
        await _EchoProvider("m", api_key=KEY, client=client).complete(_request())


_CONTEXT = ErrorContext("echo", "m-1", "https://echo.example/v1/answer", (KEY,), "check the key")


def test_status_error_names_the_model_and_url_of_a_404() -> None:
    error = status_error(ModelNotFoundError, 404, "no such model", context=_CONTEXT)
    assert str(error) == (
        "echo: model 'm-1' not found (HTTP 404 from https://echo.example/v1/answer): no such model"
    )
    assert error.status_code == 404


def test_status_error_adds_the_key_hint_to_an_authentication_error_and_scrubs_the_key() -> None:
    error = status_error(
        ProviderAuthenticationError, 401, f"bad key {KEY}", context=_CONTEXT, kind=" (auth)"
    )
    assert str(error) == "echo: HTTP 401 (auth): bad key [REDACTED] (check the key)"


def test_status_error_carries_the_wait_it_is_given() -> None:
    error = status_error(RateLimitError, 429, "slow down", context=_CONTEXT, retry_after=3.0)
    assert isinstance(error, RateLimitError)
    assert error.retry_after == 3.0


def test_an_unexpected_error_body_is_quoted_scrubbed() -> None:
    assert unexpected_error_body(f"<h1>{KEY}</h1>".encode(), _CONTEXT) == (
        "unexpected error body '<h1>[REDACTED]</h1>'"
    )
