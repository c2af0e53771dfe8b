"""Hosted tools on the Messages API: server tool entries, beta flags, paused turns continued."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from layer0 import TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_anthropic._pricing import Pricing
from neuron_provider_anthropic._wire import build_body
from neuron_tool import ToolSchema
from neuron_turn import (
    CodeExecution,
    HostedToolCall,
    NeuronTurn,
    NeuronTurnConfig,
    UserLocation,
    WebFetch,
    WebSearch,
)
from neuron_turn.loop.events import TextDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.provider import RawPart, TextPart, TokenUsage
from tests.plugins.chunked import collect

from ._support import ANSWERED, MODEL, FakeApi, message_json, reply, request, usage_json
from .test_stream import END, START, block_start, delta, message_delta, sse, stop

SEARCH_CALL = {
    "type": "server_tool_use",
    "id": "srvtoolu_01",
    "name": "web_search",
    "input": {"query": "layer0 protocol"},
}
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://example.com/layer0",
            "title": "layer0",
            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5",
            "page_age": None,
        }
    ],
}
ANSWER = {"type": "text", "text": "layer0 is a protocol."}


def paused(*content: dict[str, Any]) -> dict[str, Any]:
    usage = usage_json(100, 20, server_tool_use={"web_search_requests": 1})
    return message_json(content, stop_reason="pause_turn", usage=usage)


def test_hosted_tools_become_server_tool_entries_with_the_callers_limits() -> None:
    hosted = (
        WebSearch(
            max_uses=3,
            allowed_domains=["docs.example.com", "example.org/blog"],
            user_location=UserLocation(city="Paris", country="FR", timezone="Europe/Paris"),
        ),
        WebFetch(max_uses=2, blocked_domains=["evil.example"]),
        CodeExecution(),
    )
    add = ToolSchema(name="add", description="Add.", input_schema={"type": "object"})

    body = build_body(request(tools=[add], hosted_tools=hosted), model=MODEL, max_tokens=64)

    assert body["tools"] == [
        {"name": "add", "description": "Add.", "input_schema": {"type": "object"}},
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 3,
            "allowed_domains": ["docs.example.com", "example.org/blog"],
            "user_location": {
                "type": "approximate",
                "city": "Paris",
                "country": "FR",
                "timezone": "Europe/Paris",
            },
        },
        {
            "type": "web_fetch_20250910",
            "name": "web_fetch",
            "max_uses": 2,
            "blocked_domains": ["evil.example"],
        },
        {"type": "code_execution_20250825", "name": "code_execution"},
    ]


def test_hosted_tools_alone_send_no_tool_choice() -> None:
    body = build_body(request(hosted_tools=[WebSearch()]), model=MODEL, max_tokens=64)

    assert body["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]
    assert "tool_choice" not in body


async def test_beta_flags_are_added_to_the_callers_own() -> None:
    api = FakeApi(reply())
    async with api.provider(headers={"Anthropic-Beta": "context-1m-2025-08-07"}) as provider:
        await provider.complete(request(hosted_tools=[WebFetch(), CodeExecution()]))
        await provider.complete(request())

    with_tools, without = api.requests
    assert with_tools.headers["anthropic-beta"] == (
        "context-1m-2025-08-07,web-fetch-2025-09-10,code-execution-2025-08-25"
    )
    assert without.headers["anthropic-beta"] == "context-1m-2025-08-07"


async def test_web_search_alone_needs_no_beta_flag() -> None:
    api = FakeApi(reply())
    async with api.provider() as provider:
        await provider.complete(request(hosted_tools=[WebSearch()]))

    assert "anthropic-beta" not in api.requests[0].headers


async def test_a_paused_turn_is_sent_back_and_its_parts_make_one_response() -> None:
    second_usage = usage_json(150, 30, server_tool_use={"web_search_requests": 1})
    api = FakeApi(
        reply(paused(SEARCH_CALL, SEARCH_RESULT)),
        reply(message_json([ANSWER], usage=second_usage)),
    )
    async with api.provider() as provider:
        response = await provider.complete(request(hosted_tools=[WebSearch()]))

    first, second = api.bodies
    assert first["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert second["messages"][-1] == {
        "role": "assistant",
        "content": [SEARCH_CALL, SEARCH_RESULT],
    }
    assert second["tools"] == first["tools"]
    assert response.content == (
        RawPart("anthropic", SEARCH_CALL),
        RawPart("anthropic", SEARCH_RESULT),
        TextPart("layer0 is a protocol."),
    )
    assert response.stop_reason == "end_turn"
    assert response.hosted_calls == (HostedToolCall("web_search", {"query": "layer0 protocol"}),)
    assert response.usage == TokenUsage(250, 50, cache_read_tokens=0, cache_creation_tokens=0)
    pricing = Pricing()
    each = [
        pricing.cost(usage, model=ANSWERED, requested=MODEL)
        for usage in (paused()["usage"], second_usage)
    ]
    assert None not in each
    assert response.cost == sum(each[1:], start=each[0])  # type: ignore[arg-type]
    # Two searches at $10 per thousand are in it.
    assert response.cost is not None and response.cost.amount > Decimal("0.02")


async def test_a_second_pause_extends_the_same_assistant_message() -> None:
    api = FakeApi(
        reply(paused(SEARCH_CALL)),
        reply(paused(SEARCH_RESULT)),
        reply(message_json([ANSWER])),
    )
    async with api.provider() as provider:
        await provider.complete(request(hosted_tools=[WebSearch()]))

    assert api.bodies[2]["messages"][-1] == {
        "role": "assistant",
        "content": [SEARCH_CALL, SEARCH_RESULT],
    }
    assert len(api.bodies[2]["messages"]) == 2


async def test_a_turn_still_paused_after_its_continuations_is_kept_as_truncated(
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = FakeApi(reply(paused(SEARCH_CALL)))
    async with api.provider() as provider:
        response = await provider.complete(request(hosted_tools=[WebSearch()]))

    assert len(api.requests) == 5  # the call and MAX_CONTINUATIONS more
    assert response.stop_reason == "max_tokens"
    assert response.truncated is True
    assert len(response.content) == 5
    assert "still paused after 4 continuations" in caplog.text


def _events(*blocks: tuple[dict[str, Any], list[dict[str, Any]]], reason: str) -> str:
    events: list[dict[str, Any]] = [START]
    for index, (block, deltas) in enumerate(blocks):
        events.append(block_start(index, block))
        events.extend(delta(index, **d) for d in deltas)
        events.append(stop(index))
    events += [message_delta(reason, output_tokens=9), END]
    return sse(*events)


def _stream_reply(text: str) -> Any:
    return reply(text, headers={"content-type": "text/event-stream"})


async def test_a_paused_stream_goes_on_and_a_server_tools_input_is_no_call_delta() -> None:
    search_start = {**SEARCH_CALL, "input": {}}
    query = {"type": "input_json_delta", "partial_json": '{"query": "layer0 protocol"}'}
    api = FakeApi(
        _stream_reply(_events((search_start, [query]), (SEARCH_RESULT, []), reason="pause_turn")),
        _stream_reply(
            _events(
                ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "layer0."}]),
                reason="end_turn",
            )
        ),
    )
    async with api.provider() as provider:
        deltas, response = await collect(provider.stream(request(hosted_tools=[WebSearch()])))

    assert deltas == [TextDelta("layer0.")]
    assert not any(isinstance(d, ToolCallStart | ToolCallDelta) for d in deltas)
    assert response.content == (
        RawPart("anthropic", SEARCH_CALL),
        RawPart("anthropic", SEARCH_RESULT),
        TextPart("layer0."),
    )
    assert api.bodies[1]["messages"][-1]["content"] == [SEARCH_CALL, SEARCH_RESULT]


async def test_a_turn_sends_its_web_search_and_the_next_turn_sends_the_servers_blocks_back() -> (
    None
):
    api = FakeApi(
        reply(message_json([SEARCH_CALL, SEARCH_RESULT, ANSWER])),
        reply(message_json([{"type": "text", "text": "Still a protocol."}])),
    )
    config = NeuronTurnConfig(hosted_tools=[WebSearch(max_uses=2)])
    store = InMemoryStore()
    async with api.provider() as provider:
        turn = NeuronTurn(provider, config=config, state=store)
        orchestrator = LocalOrchestrator({"main": turn}, store)
        first = await orchestrator.dispatch(
            "main", TurnInput(message="What is layer0?", trigger="user", session="s")
        )
        second = await orchestrator.dispatch(
            "main", TurnInput(message="And now?", trigger="user", session="s")
        )

    assert first.message.as_text() == "layer0 is a protocol."
    assert second.exit_reason == "complete"
    assert api.bodies[0]["tools"][-1:] == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    ]
    assert api.bodies[1]["messages"][1] == {
        "role": "assistant",
        "content": [SEARCH_CALL, SEARCH_RESULT, ANSWER],
    }


def test_the_provider_says_which_hosted_tools_it_runs() -> None:
    assert AnthropicProvider.hosted_tools == {"web_search", "web_fetch", "code_execution", "mcp"}


async def test_code_executions_own_tools_are_recorded_as_code_execution() -> None:
    bash = {
        "type": "server_tool_use",
        "id": "srvtoolu_02",
        "name": "bash_code_execution",
        "input": {"command": "python -c 'print(2**10)'"},
    }
    api = FakeApi(reply(message_json([bash, ANSWER])))
    async with api.provider() as provider:
        response = await provider.complete(request(hosted_tools=[CodeExecution()]))
    assert response.hosted_calls == (
        HostedToolCall("code_execution", {"command": "python -c 'print(2**10)'"}),
    )
