"""`OpenAIProvider` configuration, key handling, client lifecycle and cost (MockTransport)."""

from __future__ import annotations

import logging
from decimal import Decimal

import httpx
import pytest
from moneyed import Money

from layer0 import Base64Source
from neuron_provider_openai import DEFAULT_BASE_URL, OpenAIProvider
from neuron_turn.loop.provider import (
    ImagePart,
    Provider,
    ProviderMessage,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderAuthenticationError,
    ProviderConnectionError,
)

from ._support import KEY, Recorder, completion, json_response, mocked, request, tool_call, user

# --- the call -------------------------------------------------------------------


async def test_complete_posts_to_chat_completions_with_a_bearer_key() -> None:
    provider, recorder = mocked()
    response = await provider.complete(request(user("Hi"), system="Be brief."))
    sent = recorder.requests[0]
    assert sent.method == "POST"
    assert str(sent.url) == "https://api.openai.com/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert recorder.body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert response.content == [TextPart("Hello!")]
    assert response.stop_reason == "end_turn"
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert response.truncated is False


async def test_provider_satisfies_the_protocol() -> None:
    provider, _ = mocked()
    assert isinstance(provider, Provider)


async def test_reasoning_model_gets_a_developer_prompt_and_override_wins() -> None:
    provider, recorder = mocked()
    await provider.complete(request(system="Rules.", model="o3-mini"))
    assert recorder.body["messages"][0]["role"] == "developer"
    forced, recorder = mocked(system_role="system")
    await forced.complete(request(system="Rules.", model="o3-mini"))
    assert recorder.body["messages"][0]["role"] == "system"


async def test_constructor_model_is_used_when_the_request_names_none() -> None:
    provider, recorder = mocked()
    await provider.complete(request(model=""))
    assert recorder.body["model"] == "gpt-4o-mini"


async def test_no_model_at_all_is_an_invalid_request() -> None:
    recorder = Recorder(json_response(completion()))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = OpenAIProvider(api_key=KEY, client=client)
    with pytest.raises(InvalidRequestError, match="no model"):
        await provider.complete(request(model=""))
    assert recorder.requests == []


async def test_unsupported_content_is_an_invalid_request_before_any_call() -> None:
    provider, recorder = mocked()
    bad = ProviderMessage("user", [ToolUsePart("c", "f", {})])
    with pytest.raises(InvalidRequestError, match="cannot hold a tool call") as info:
        await provider.complete(request(bad))
    assert info.value.provider == "openai"
    assert recorder.requests == []


async def test_length_finish_is_max_tokens_and_truncated() -> None:
    provider, _ = mocked(json_response(completion("Once upon a", finish_reason="length")))
    response = await provider.complete(request(max_tokens=3))
    assert (response.stop_reason, response.truncated) == ("max_tokens", True)


async def test_headers_and_body_defaults_are_sent_on_every_call() -> None:
    provider, recorder = mocked(
        headers={"OpenAI-Organization": "org-1"}, body_defaults={"seed": 7, "n": 1}
    )
    await provider.complete(request())
    await provider.complete(request(extra={"seed": 8}))
    assert all(r.headers["openai-organization"] == "org-1" for r in recorder.requests)
    assert recorder.body["seed"] == 8
    assert recorder.body["n"] == 1


async def test_request_body_shows_what_complete_sends() -> None:
    provider, recorder = mocked()
    req = request(user("Hi"), max_tokens=5, extra={"metadata": {"t": "1"}})
    await provider.complete(req)
    assert provider.request_body(req) == recorder.body


async def test_tool_loop_round_trip_sends_calls_and_results_back() -> None:
    first = json_response(
        completion(None, finish_reason="tool_calls", tool_calls=[tool_call("c1", "f", '{"a":1}')])
    )
    provider, recorder = mocked(first, json_response(completion("Done.")))
    one = await provider.complete(request(user("Go")))
    history = [
        user("Go"),
        ProviderMessage("assistant", one.content),
        ProviderMessage("user", [ToolResultPart("c1", "42")]),
    ]
    two = await provider.complete(request(*history))
    assert recorder.body["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]
    assert two.content == [TextPart("Done.")]


async def test_a_tool_results_image_is_posted_in_a_user_message_after_the_tool_message() -> None:
    first = json_response(
        completion(None, finish_reason="tool_calls", tool_calls=[tool_call("c1", "shot", "{}")])
    )
    provider, recorder = mocked(first, json_response(completion("A login page.")))
    one = await provider.complete(request(user("What is on screen?")))
    shot = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
    history = [
        user("What is on screen?"),
        ProviderMessage("assistant", one.content),
        ProviderMessage("user", [ToolResultPart("c1", "captured", files=(shot,))]),
    ]
    await provider.complete(request(*history))
    assert recorder.body["messages"][2:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "captured"},
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The tool call shot (call c1) returned this file with its result:",
                },
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        },
    ]


# --- API key --------------------------------------------------------------------


async def test_key_is_read_from_the_environment_at_the_first_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider, recorder = mocked(api_key=None)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    await provider.complete(request())
    assert recorder.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_missing_key_fails_at_the_first_call_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider, recorder = mocked(api_key=None)  # construction does not fail
    with pytest.raises(ProviderAuthenticationError, match="OPENAI_API_KEY") as info:
        await provider.complete(request())
    assert not info.value.retryable
    assert recorder.requests == []


async def test_custom_base_url_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider, recorder = mocked(api_key=None, base_url="http://localhost:11434/v1/")
    await provider.complete(request(model="qwen3:0.6b"))
    sent = recorder.requests[0]
    assert str(sent.url) == "http://localhost:11434/v1/chat/completions"
    assert "authorization" not in sent.headers


async def test_custom_base_url_can_still_require_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider, _ = mocked(
        api_key=None, base_url="https://openrouter.ai/api/v1", require_api_key=True
    )
    with pytest.raises(ProviderAuthenticationError):
        await provider.complete(request())


# --- secrets never leak -----------------------------------------------------------


def test_repr_redacts_the_key() -> None:
    provider = OpenAIProvider("gpt-4o-mini", api_key=KEY)
    text = repr(provider)
    assert KEY not in text
    assert "api_key='[REDACTED]'" in text
    assert "gpt-4o-mini" in text


async def test_key_never_appears_in_log_lines(caplog: pytest.LogCaptureFixture) -> None:
    body = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "x", "code": None}}
    provider, _ = mocked(json_response(completion()), json_response(body, 401))
    with caplog.at_level(logging.DEBUG):
        await provider.complete(request())
        with pytest.raises(ProviderAuthenticationError):
            await provider.complete(request())
    assert "POST https://api.openai.com/v1/chat/completions" in caplog.text
    assert KEY not in caplog.text


# --- client lifecycle -------------------------------------------------------------


async def test_own_client_is_built_once_reused_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(json_response(completion()))
    built: list[httpx.AsyncClient] = []
    real = httpx.AsyncClient

    def client_factory(**kwargs: object) -> httpx.AsyncClient:
        client = real(transport=httpx.MockTransport(recorder), **kwargs)  # type: ignore[arg-type]
        built.append(client)
        return client

    monkeypatch.setattr(httpx, "AsyncClient", client_factory)
    async with OpenAIProvider("gpt-4o-mini", api_key=KEY, timeout=12.5) as provider:
        await provider.complete(request())
        await provider.complete(request())
    assert len(built) == 1
    assert built[0].is_closed
    assert built[0].timeout == httpx.Timeout(12.5)
    assert len(recorder.requests) == 2


async def test_constructing_a_provider_opens_nothing() -> None:
    provider = OpenAIProvider("gpt-4o-mini", api_key=KEY)
    await provider.aclose()  # nothing to close, no error


async def test_injected_client_is_left_open_by_aclose() -> None:
    provider, _ = mocked()
    client = provider._client
    assert client is not None
    await provider.complete(request())
    await provider.aclose()
    assert not client.is_closed
    await client.aclose()


async def test_closed_injected_client_is_a_connection_error() -> None:
    provider, _ = mocked()
    assert provider._client is not None
    await provider._client.aclose()
    with pytest.raises(ProviderConnectionError, match="closed"):
        await provider.complete(request())


async def test_timeout_option_is_applied_to_requests_on_an_injected_client() -> None:
    seen: list[object] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.extensions["timeout"])
        return json_response(completion())

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler), timeout=99.0)
    await OpenAIProvider("m", api_key=KEY, client=client).complete(request())
    await OpenAIProvider("m", api_key=KEY, client=client, timeout=3.0).complete(request())
    assert seen[0] == httpx.Timeout(99.0).as_dict()
    assert seen[1] == httpx.Timeout(3.0).as_dict()
    await client.aclose()


# --- cost ---------------------------------------------------------------------------


async def test_cost_comes_from_genai_prices_for_the_answered_model() -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 100}
    provider, _ = mocked(json_response(completion(usage=usage)))
    response = await provider.complete(request())
    # gpt-4o-mini: $0.15 / MTok in, $0.60 / MTok out.
    assert response.cost == Money(Decimal("0.00021"), "USD")
    assert isinstance(response.cost.amount, Decimal)


async def test_cached_prompt_tokens_are_billed_at_the_cache_price() -> None:
    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 100,
        "prompt_tokens_details": {"cached_tokens": 1000},
    }
    provider, _ = mocked(json_response(completion(usage=usage)))
    response = await provider.complete(request())
    # All 1000 prompt tokens cached: $0.075 / MTok instead of $0.15.
    assert response.cost == Money(Decimal("0.000135"), "USD")


async def test_unknown_model_on_openai_has_no_cost() -> None:
    provider, _ = mocked(json_response(completion(model="my-finetune-xyz")))
    response = await provider.complete(request(model="my-finetune-xyz"))
    assert response.cost is None


async def test_custom_server_costs_nothing_unless_priced() -> None:
    answer = json_response(completion(model="qwen3:0.6b"))
    local, _ = mocked(answer, base_url="http://localhost:8000/v1")
    assert (await local.complete(request(model="qwen3:0.6b"))).cost == Money(Decimal(0), "USD")


async def test_prices_option_overrides_and_adds_models() -> None:
    prices = {
        "qwen3:0.6b": {"input_mtok": "0.5", "output_mtok": "1.5"},
        "gpt-4o-mini": {"input_mtok": "1", "output_mtok": "2", "cache_read_mtok": "0.1"},
    }
    usage = {
        "prompt_tokens": 2000,
        "completion_tokens": 1000,
        "prompt_tokens_details": {"cached_tokens": 1000},
    }
    local, _ = mocked(
        json_response(completion(model="qwen3:0.6b", usage=usage)),
        base_url="http://localhost:8000/v1",
        prices=prices,
    )
    assert (await local.complete(request(model="qwen3:0.6b"))).cost == Money(
        Decimal("0.0025"),
        "USD",  # 1000 * 0.5 + 1000 * 0.5 (no cache price) + 1000 * 1.5
    )
    # Keyed by the requested model when the answered one (a dated snapshot) is not listed.
    cloud, _ = mocked(json_response(completion(usage=usage)), prices=prices)
    assert (await cloud.complete(request())).cost == Money(
        Decimal("0.0031"),
        "USD",  # 1000 * 1 + 1000 * 0.1 + 1000 * 2
    )


async def test_lookup_prices_prices_a_compatible_host_from_price_data() -> None:
    answer = json_response(completion(model="unknown-local-model"))
    provider, _ = mocked(answer, base_url="http://localhost:8000/v1", lookup_prices=True)
    assert (await provider.complete(request(model="unknown-local-model"))).cost is None


@pytest.mark.parametrize(
    ("prices", "match"),
    [
        ({"m": {"input_mtok": 0.5, "output_mtok": "1"}}, "decimal string"),
        ({"m": {"input_mtok": "abc", "output_mtok": "1"}}, "not a decimal"),
        ({"m": {"input_mtok": "-1", "output_mtok": "1"}}, "non-negative"),
        ({"m": {"input_mtok": "1"}}, "missing"),
        ({"m": {"input_mtok": "1", "output_mtok": "1", "cache_write": "1"}}, "unknown key"),
    ],
)
def test_bad_prices_are_rejected_at_construction(prices: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        OpenAIProvider("m", prices=prices)  # type: ignore[arg-type]


def test_default_base_url_is_openai() -> None:
    assert OpenAIProvider("m").base_url == DEFAULT_BASE_URL == "https://api.openai.com/v1"


async def test_body_json_cannot_hold_is_an_invalid_request_before_any_call() -> None:
    provider, recorder = mocked()
    with pytest.raises(InvalidRequestError, match="not valid JSON"):
        await provider.complete(request(temperature=float("nan")))
    assert recorder.requests == []


async def test_secret_headers_are_hidden_in_error_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    azure_key = "azure-0123456789-secret"
    body = {"error": {"message": f"Access denied for key {azure_key}", "type": "x", "code": None}}
    provider, recorder = mocked(
        json_response(body, 401),
        api_key=None,
        base_url="https://example.openai.azure.com/openai/v1",
        headers={"api-key": azure_key},
    )
    with pytest.raises(ProviderAuthenticationError) as info:
        await provider.complete(request())
    assert recorder.requests[0].headers["api-key"] == azure_key
    assert azure_key not in str(info.value)


async def test_a_base_url_httpx_cannot_parse_fails_the_call_not_the_construction() -> None:
    provider = OpenAIProvider("gpt-4o-mini", api_key=KEY, base_url="http://\x00host/v1")

    with pytest.raises(InvalidRequestError, match="cannot be called at that URL"):
        await provider.complete(request(user("Hi")))
