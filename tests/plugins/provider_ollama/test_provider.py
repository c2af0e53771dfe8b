from __future__ import annotations

import logging
from decimal import Decimal

import httpx
import pytest
from moneyed import Money

from layer0 import Base64Source
from neuron_provider_ollama import OllamaProvider
from neuron_turn import (
    ImagePart,
    InvalidRequestError,
    Provider,
    ProviderAuthenticationError,
    ProviderMessage,
    ProviderRequest,
    ProviderResponseError,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)

from ._support import answering, chat_body, provider_with, sent_json, user_request

KEY = "ollama-test-key-5f2d9c1e7b"


def test_provider_satisfies_the_protocol() -> None:
    assert isinstance(OllamaProvider("llama3.2"), Provider)


async def test_text_call_posts_to_api_chat_and_returns_the_reply() -> None:
    seen: list[httpx.Request] = []
    provider = provider_with(answering(chat_body("Paris."), seen))
    response = await provider.complete(user_request("Capital of France?"))
    assert list(response.content) == [TextPart("Paris.")]
    [request] = seen
    assert request.method == "POST"
    assert str(request.url) == "http://localhost:11434/api/chat"
    assert request.headers["content-type"] == "application/json"
    assert sent_json(request)["stream"] is False


async def test_a_tool_results_image_is_posted_as_a_user_message_after_the_tool_message() -> None:
    seen: list[httpx.Request] = []
    provider = provider_with(answering(chat_body("A login page."), seen))
    shot = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
    request = ProviderRequest(
        "llama3.2",
        [
            ProviderMessage("user", [TextPart("What is on screen?")]),
            ProviderMessage("assistant", [ToolUsePart("c1", "screenshot", {})]),
            ProviderMessage("user", [ToolResultPart("c1", "captured", files=(shot,))]),
        ],
    )
    await provider.complete(request)
    [sent] = seen
    assert sent_json(sent)["messages"][2:] == [
        {"role": "tool", "content": "captured", "tool_name": "screenshot"},
        {
            "role": "user",
            "content": "The tool call screenshot (call c1) returned this file with its result:",
            "images": ["iVBORw0KGgo="],
        },
    ]


async def test_ollama_host_without_scheme_sets_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:9000")
    seen: list[httpx.Request] = []
    client = httpx.AsyncClient(transport=httpx.MockTransport(answering(chat_body(), seen)))
    provider = OllamaProvider("llama3.2", client=client)
    await provider.complete(user_request())
    assert str(seen[0].url) == "http://gpu-box:9000/api/chat"
    assert provider.base_url == "http://gpu-box:9000"


def test_default_server_is_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert OllamaProvider("llama3.2").base_url == "http://localhost:11434"


async def test_no_api_key_sends_no_authorization_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    seen: list[httpx.Request] = []
    await provider_with(answering(chat_body(), seen)).complete(user_request())
    assert "authorization" not in seen[0].headers


async def test_api_key_is_sent_as_bearer_token() -> None:
    seen: list[httpx.Request] = []
    provider = provider_with(answering(chat_body(), seen), api_key=KEY)
    await provider.complete(user_request())
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"


async def test_api_key_is_read_from_ollama_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_API_KEY", KEY)
    seen: list[httpx.Request] = []
    await provider_with(answering(chat_body(), seen)).complete(user_request())
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"


def test_repr_redacts_the_api_key() -> None:
    provider = OllamaProvider("llama3.2", api_key=KEY, base_url="https://ollama.com")
    text = repr(provider)
    assert KEY not in text
    assert "api_key='[REDACTED]'" in text
    assert "https://ollama.com" in text


async def test_api_key_echoed_by_the_server_never_reaches_errors_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def echo(request: httpx.Request) -> httpx.Response:
        said = f"invalid key {request.headers['authorization']}"
        return httpx.Response(401, json={"error": said})

    caplog.set_level(logging.DEBUG)
    provider = provider_with(echo, api_key=KEY)
    with pytest.raises(ProviderAuthenticationError) as info:
        await provider.complete(user_request())
    assert "invalid key Bearer [REDACTED]" in info.value.message
    assert KEY not in str(info.value)
    assert KEY not in repr(info.value.args)
    assert "ollama error 401" in caplog.text
    assert KEY not in caplog.text


async def test_api_key_echoed_in_an_unexpected_200_body_is_redacted() -> None:
    def echo(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"echo": request.headers["authorization"]})

    with pytest.raises(ProviderResponseError) as info:
        await provider_with(echo, api_key=KEY).complete(user_request())
    assert KEY not in str(info.value)
    assert KEY not in repr(info.value.__cause__) + repr(info.value.__context__)


async def test_no_fragment_of_an_echoed_key_survives_where_a_quote_is_cut() -> None:
    # The key lands right where the 200-character quote of the body ends.
    def echo(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"padding": "x" * 165, "echo": KEY})

    with pytest.raises(ProviderResponseError) as info:
        await provider_with(echo, api_key=KEY).complete(user_request())
    message = str(info.value)
    assert "[REDACTED]" in message or "echo" not in message
    assert all(KEY[:n] not in message for n in range(8, len(KEY) + 1))


async def test_an_echoed_key_never_reaches_the_answer() -> None:
    reply = chat_body()
    reply["message"]["content"] = f"your key is {KEY}"

    def echo(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=reply)

    response = await provider_with(echo, api_key=KEY).complete(user_request())
    assert KEY not in str(response.content)


async def test_request_model_wins_and_provider_model_fills_an_empty_one() -> None:
    seen: list[httpx.Request] = []
    provider = provider_with(answering(chat_body(), seen))
    await provider.complete(user_request(model="qwen2.5"))
    await provider.complete(user_request(model=""))
    assert [sent_json(r)["model"] for r in seen] == ["qwen2.5", "llama3.2"]


async def test_no_model_anywhere_is_an_invalid_request() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(answering(chat_body())))
    with pytest.raises(InvalidRequestError, match="no model"):
        await OllamaProvider(client=client).complete(user_request(model=""))


@pytest.mark.parametrize(
    ("timeout", "expected_read"),
    [(5.0, 5.0), (httpx.Timeout(30.0, connect=2.0), 30.0), (None, None)],
)
async def test_timeout_applies_to_every_call(
    timeout: httpx.Timeout | float | None, expected_read: float | None
) -> None:
    seen: list[httpx.Request] = []
    provider = provider_with(answering(chat_body(), seen), timeout=timeout)
    await provider.complete(user_request())
    assert seen[0].extensions["timeout"]["read"] == expected_read


async def test_default_timeout_allows_slow_model_loads() -> None:
    seen: list[httpx.Request] = []
    await provider_with(answering(chat_body(), seen)).complete(user_request())
    assert seen[0].extensions["timeout"]["read"] >= 300


async def test_injected_client_is_not_closed() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(answering(chat_body())))
    async with OllamaProvider("llama3.2", client=client) as provider:
        await provider.complete(user_request())
    assert not client.is_closed


async def test_own_client_is_closed_by_async_with_and_aclose() -> None:
    async with OllamaProvider("llama3.2") as provider:
        own = provider._client
        states = [own.is_closed]
    states.append(own.is_closed)
    other = OllamaProvider("llama3.2")
    await other.aclose()
    states.append(other._client.is_closed)
    assert states == [False, True, True]


async def test_one_client_is_reused_for_every_call() -> None:
    seen: list[httpx.Request] = []
    provider = provider_with(answering(chat_body(), seen))
    client = provider._client
    await provider.complete(user_request())
    await provider.complete(user_request())
    assert provider._client is client
    assert len(seen) == 2


# --- cost -------------------------------------------------------------------


async def test_unpriced_model_costs_zero_usd() -> None:
    response = await provider_with(answering(chat_body())).complete(user_request())
    assert response.cost == Money("0", "USD")


async def test_configured_price_gives_exact_decimal_cost() -> None:
    prices = {"llama3.2": {"input_mtok": "0.10", "output_mtok": "0.40"}}
    body = chat_body(prompt_eval_count=1000, eval_count=250)
    response = await provider_with(answering(body), prices=prices).complete(user_request())
    assert response.cost == Money(Decimal("0.0002"), "USD")
    assert isinstance(response.cost.amount, Decimal)


async def test_price_is_keyed_by_the_answering_model_with_or_without_latest() -> None:
    prices = {"llama3.2": {"input_mtok": "1", "output_mtok": "1"}}
    body = chat_body(model="llama3.2:latest", prompt_eval_count=500_000, eval_count=500_000)
    response = await provider_with(answering(body), prices=prices).complete(
        user_request(model="some-alias")
    )
    assert response.cost == Money("1", "USD")


def test_float_prices_are_refused() -> None:
    with pytest.raises(TypeError, match="float"):
        OllamaProvider("m", prices={"m": {"input_mtok": 0.1}})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    "entry",
    [{"input_mtk": "1"}, {"input_mtok": "cheap"}, {"output_mtok": "-1"}, {"input_mtok": "NaN"}],
)
def test_bad_prices_are_refused_naming_the_entry(entry: dict[str, str]) -> None:
    with pytest.raises(ValueError, match=r"prices\['m'\]"):
        OllamaProvider("m", prices={"m": entry})


async def test_a_base_url_httpx_cannot_parse_fails_the_call_not_the_construction() -> None:
    provider = OllamaProvider("llama3.2", base_url="http://\x00host")

    with pytest.raises(InvalidRequestError, match="cannot be called at that URL"):
        await provider.complete(user_request())
