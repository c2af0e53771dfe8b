from __future__ import annotations

import json
import logging
from decimal import Decimal

import httpx
import pytest
from moneyed import Money

from layer0 import Base64Source
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_anthropic.provider import API_KEY_ENV, DEFAULT_TIMEOUT
from neuron_turn.loop.provider import (
    ImagePart,
    Provider,
    ProviderMessage,
    ProviderResponse,
    RawPart,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import InvalidRequestError, ProviderAuthenticationError

from ._support import (
    ANSWERED,
    API_KEY,
    MODEL,
    FakeApi,
    assistant,
    error_body,
    message_json,
    reply,
    request,
    usage_json,
    user,
)


def test_provider_satisfies_the_provider_protocol() -> None:
    assert isinstance(FakeApi().provider(), Provider)


async def test_call_posts_to_v1_messages_with_key_version_and_json_headers() -> None:
    api = FakeApi()

    await api.provider().complete(request())

    sent = api.requests[0]
    assert sent.method == "POST"
    assert str(sent.url) == "https://api.anthropic.com/v1/messages"
    assert sent.headers["x-api-key"] == API_KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers


async def test_base_url_override_keeps_its_path_prefix() -> None:
    api = FakeApi()

    await api.provider(base_url="https://gateway.example/anthropic/").complete(request())

    assert str(api.requests[0].url) == "https://gateway.example/anthropic/v1/messages"


async def test_extra_headers_are_sent_but_cannot_replace_the_key() -> None:
    api = FakeApi()
    headers = {"anthropic-beta": "context-1m-2025-08-07", "x-api-key": "other"}

    await api.provider(headers=headers).complete(request())

    assert api.requests[0].headers["anthropic-beta"] == "context-1m-2025-08-07"
    assert api.requests[0].headers["x-api-key"] == API_KEY


async def test_response_carries_content_usage_answered_model_and_cost() -> None:
    content = [
        {"type": "text", "text": "Calling."},
        {"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": {"expression": "1+1"}},
    ]
    body = message_json(content, stop_reason="tool_use", usage=usage_json(1000, 100))

    response = await FakeApi(reply(body)).provider().complete(request())

    assert response == ProviderResponse(
        content=(
            TextPart("Calling."),
            ToolUsePart(id="toolu_1", name="calculator", input={"expression": "1+1"}),
        ),
        stop_reason="tool_use",
        usage=TokenUsage(1000, 100, cache_read_tokens=0, cache_creation_tokens=0),
        model=ANSWERED,
        cost=Money(Decimal("0.0015"), "USD"),
        truncated=False,
    )


async def test_unknown_answered_model_gives_no_cost() -> None:
    body = message_json(model="claude-from-the-future-9")

    response = await FakeApi(reply(body)).provider().complete(request())

    assert response.model == "claude-from-the-future-9"
    assert response.cost is None


async def test_prices_option_prices_a_model_genai_prices_does_not_know() -> None:
    body = message_json(model="my-finetune", usage=usage_json(1_000_000, 1_000_000))
    provider = FakeApi(reply(body)).provider(
        prices={"my-finetune": {"input_mtok": "0.5", "output_mtok": "1.5"}}
    )

    response = await provider.complete(request(model="my-finetune"))

    assert response.cost == Money(Decimal("2"), "USD")


async def test_default_max_tokens_option_is_sent_when_the_request_has_none() -> None:
    api = FakeApi()

    await api.provider(max_tokens=321).complete(request())

    assert api.bodies[0]["max_tokens"] == 321


async def test_thinking_survives_a_round_trip_through_the_provider() -> None:
    thinking = {"type": "thinking", "thinking": "Need the tool.", "signature": "c2lnbmF0dXJl"}
    redacted = {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="}
    call = {"type": "tool_use", "id": "toolu_9", "name": "f", "input": {}}
    api = FakeApi(reply(message_json([thinking, redacted, call], stop_reason="tool_use")), reply())
    provider = api.provider()
    extra = {"thinking": {"type": "enabled", "budget_tokens": 1024}}

    first = await provider.complete(request(user("q"), extra=extra))
    history = [user("q"), ProviderMessage("assistant", first.content)]
    await provider.complete(request(*history, extra=extra))

    assert first.content[:2] == (
        ThinkingPart("Need the tool.", "c2lnbmF0dXJl"),
        RawPart("anthropic", redacted),
    )
    assert api.bodies[1]["messages"][1]["content"] == [thinking, redacted, call]
    assert api.bodies[1]["thinking"] == {"type": "enabled", "budget_tokens": 1024}


async def test_stream_option_asks_for_events_and_folds_them_into_one_response() -> None:
    events = [
        {"type": "message_start", "message": message_json(content=(), stop_reason=None)},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi!"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    ]
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    api = FakeApi(reply(text, headers={"content-type": "text/event-stream; charset=utf-8"}))

    response = await api.provider(stream=True).complete(request())

    assert api.bodies[0]["stream"] is True
    assert response.content == (TextPart("Hi!"),)
    assert response.stop_reason == "end_turn"
    assert response.usage.output_tokens == 3


async def test_a_tool_results_image_is_posted_inside_it_by_complete_and_by_stream() -> None:
    shot = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
    conversation = request(
        user("Show me the page."),
        assistant(ToolUsePart("toolu_1", "screenshot", {})),
        user(ToolResultPart("toolu_1", "captured", files=(shot,))),
    )
    api = FakeApi()
    provider = api.provider(cache=True)

    await provider.complete(conversation)
    async for _ in provider.stream(conversation):
        pass

    expected = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [
            {"type": "text", "text": "captured"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
            },
        ],
        "is_error": False,
        "cache_control": {"type": "ephemeral"},
    }
    assert [body["messages"][-1]["content"] for body in api.bodies] == [[expected], [expected]]


# --- configuration --------------------------------------------------------------


async def test_missing_key_fails_at_the_first_call_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    api = FakeApi()
    provider = api.provider(api_key=None)  # construction must not fail

    with pytest.raises(ProviderAuthenticationError, match=API_KEY_ENV):
        await provider.complete(request())
    assert api.requests == []


async def test_key_is_read_from_the_environment_when_not_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-ant-from-env")
    api = FakeApi()

    await api.provider(api_key=None).complete(request())

    assert api.requests[0].headers["x-api-key"] == "sk-ant-from-env"


def test_repr_redacts_the_key() -> None:
    provider = FakeApi().provider()

    assert API_KEY not in repr(provider)
    assert "api_key='[REDACTED]'" in repr(provider)
    assert MODEL in repr(provider)


async def test_log_lines_never_contain_the_key(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    provider = FakeApi(
        reply(), reply(error_body("authentication_error", f"bad key {API_KEY}"), status=401)
    ).provider()

    await provider.complete(request())
    with pytest.raises(ProviderAuthenticationError):
        await provider.complete(request())

    assert any("anthropic call" in record.getMessage() for record in caplog.records)
    assert all(API_KEY not in record.getMessage() for record in caplog.records)
    assert API_KEY not in caplog.text


async def test_one_client_is_reused_for_every_call() -> None:
    built: list[httpx.AsyncClient] = []
    api = FakeApi()

    class CountingClient(httpx.AsyncClient):
        def __init__(self, **kwargs: object) -> None:
            super().__init__(transport=httpx.MockTransport(api))
            built.append(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(httpx, "AsyncClient", CountingClient)
        provider = AnthropicProvider(MODEL, api_key=API_KEY)
    for _ in range(3):
        await provider.complete(request())
    await provider.aclose()

    assert len(built) == 1
    assert len(api.requests) == 3
    assert built[0].is_closed


async def test_aclose_leaves_an_injected_client_open() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(FakeApi()))
    provider = AnthropicProvider(MODEL, api_key=API_KEY, client=client)

    await provider.aclose()

    assert not client.is_closed
    await client.aclose()


async def test_async_with_closes_the_client_it_built() -> None:
    async with AnthropicProvider(MODEL, api_key=API_KEY) as provider:
        client = provider._client
        assert not client.is_closed

    assert client.is_closed


async def test_own_client_uses_the_default_timeout_or_a_float_given() -> None:
    async with AnthropicProvider(MODEL, api_key=API_KEY) as default:
        assert default._client.timeout == DEFAULT_TIMEOUT
    async with AnthropicProvider(MODEL, api_key=API_KEY, timeout=12.5) as custom:
        assert custom._client.timeout == httpx.Timeout(12.5)


async def test_timeout_option_applies_to_each_request_on_an_injected_client() -> None:
    api = FakeApi()

    await api.provider(timeout=httpx.Timeout(30.0, connect=2.0)).complete(request())

    assert api.requests[0].extensions["timeout"] == httpx.Timeout(30.0, connect=2.0).as_dict()


async def test_extra_that_is_not_json_is_an_invalid_request_not_a_type_error() -> None:
    api = FakeApi()

    with pytest.raises(InvalidRequestError, match="not JSON"):
        await api.provider().complete(request(extra={"when": object()}))  # type: ignore[dict-item]
    assert api.requests == []


async def test_a_base_url_httpx_cannot_parse_fails_the_call_not_the_construction() -> None:
    provider = AnthropicProvider(MODEL, api_key=API_KEY, base_url="http://\x00host")

    with pytest.raises(InvalidRequestError, match="cannot be called at that URL"):
        await provider.complete(request())


async def test_the_cache_option_marks_every_call_and_a_cache_read_is_priced_as_one() -> None:
    read = usage_json(100, 20) | {"cache_read_input_tokens": 10_000}
    api = FakeApi(reply(message_json(usage=read)))
    provider = api.provider(cache=True)
    long_system = request(system="You are a careful assistant. " * 400)

    response = await provider.complete(long_system)
    async for _ in provider.stream(long_system):
        pass

    assert len(api.bodies) == 2 and api.bodies[1]["stream"] is True
    for body in api.bodies:
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert response.usage.input_tokens == 10_100 and response.usage.cache_read_tokens == 10_000
    uncached = (
        await FakeApi(reply(message_json(usage=usage_json(10_100, 20))))
        .provider()
        .complete(long_system)
    )
    assert response.cost is not None and uncached.cost is not None
    assert response.cost < uncached.cost / 5  # a cache read costs a tenth of an input token
