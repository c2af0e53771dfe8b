"""Remote MCP servers (`HostedMCP`) through the Messages API's MCP connector.

The body's `mcp_servers` and `mcp_toolset` entries, the beta flag, the answer's
`mcp_tool_use` / `mcp_tool_result` blocks (complete and streamed) as hosted calls
and raw parts sent back whole, and the server's token kept out of logs and errors.
"""

from __future__ import annotations

import gzip
import json
import logging
from typing import Any

import httpx
import pytest

from layer0 import TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_anthropic._wire import build_body
from neuron_turn import HostedMCP, HostedToolCall, NeuronTurn, NeuronTurnConfig, WebFetch
from neuron_turn.loop.events import TextDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.provider import RawPart, TextPart
from neuron_turn.loop.provider_errors import InvalidRequestError, ProviderError, RateLimitError
from tests.plugins.chunked import collect

from ._support import (
    MODEL,
    FakeApi,
    assistant,
    error_body,
    message_json,
    reply,
    request,
    user,
)
from .test_hosted_tools import _events, _stream_reply
from .test_stream import START, sse

TOKEN = "mcp-tok-7f3a9c0e5b1d4e2f8a6c-SECRET"
"""A fake bearer token, long and odd enough that finding it anywhere means a leak."""

DOCS = HostedMCP(label="docs", url="https://mcp.example.com/docs")
TICKETS = HostedMCP(
    label="tickets",
    url="https://tickets.example.com/mcp",
    allowed_tools=("search_tickets", "get_ticket"),
    authorization=TOKEN,
)

MCP_CALL = {
    "type": "mcp_tool_use",
    "id": "mcptoolu_01",
    "name": "search_tickets",
    "server_name": "tickets",
    "input": {"query": "login fails", "limit": 3},
}
MCP_RESULT = {
    "type": "mcp_tool_result",
    "tool_use_id": "mcptoolu_01",
    "is_error": False,
    "content": [{"type": "text", "text": "TICKET-12: login fails on Safari"}],
}
MCP_ERROR = {
    "type": "mcp_tool_result",
    "tool_use_id": "mcptoolu_01",
    "is_error": True,
    "content": [{"type": "text", "text": "tool search_tickets failed: index offline"}],
}
ANSWER = {"type": "text", "text": "TICKET-12 is the one."}
CALL = HostedToolCall(
    "mcp",
    {
        "server": "tickets",
        "tool": "search_tickets",
        "arguments": {"query": "login fails", "limit": 3},
    },
)


# --- request ------------------------------------------------------------------


def test_one_server_without_a_token_is_a_server_entry_and_a_toolset_of_all_its_tools() -> None:
    body = build_body(request(hosted_tools=[DOCS]), model=MODEL, max_tokens=64)

    assert body["mcp_servers"] == [
        {"type": "url", "url": "https://mcp.example.com/docs", "name": "docs"}
    ]
    assert body["tools"] == [{"type": "mcp_toolset", "mcp_server_name": "docs"}]
    assert "tool_choice" not in body


def test_two_servers_with_allowed_tools_and_a_token() -> None:
    search = WebFetch()
    body = build_body(request(hosted_tools=[search, DOCS, TICKETS]), model=MODEL, max_tokens=64)

    assert body["mcp_servers"] == [
        {"type": "url", "url": "https://mcp.example.com/docs", "name": "docs"},
        {
            "type": "url",
            "url": "https://tickets.example.com/mcp",
            "name": "tickets",
            "authorization_token": TOKEN,
        },
    ]
    assert body["tools"] == [
        {"type": "web_fetch_20250910", "name": "web_fetch"},
        {"type": "mcp_toolset", "mcp_server_name": "docs"},
        {
            "type": "mcp_toolset",
            "mcp_server_name": "tickets",
            "default_config": {"enabled": False},
            "configs": {"search_tickets": {"enabled": True}, "get_ticket": {"enabled": True}},
        },
    ]


def test_an_empty_allowlist_enables_none_of_the_servers_tools() -> None:
    none = HostedMCP(label="docs", url="https://mcp.example.com/docs", allowed_tools=())
    body = build_body(request(hosted_tools=[none]), model=MODEL, max_tokens=64)

    assert body["tools"] == [
        {"type": "mcp_toolset", "mcp_server_name": "docs", "default_config": {"enabled": False}}
    ]


def test_a_request_without_a_server_sends_no_mcp_servers() -> None:
    body = build_body(request(hosted_tools=[WebFetch()]), model=MODEL, max_tokens=64)

    assert "mcp_servers" not in body


async def test_the_beta_flag_is_added_once_beside_the_callers_and_other_tools_flags() -> None:
    api = FakeApi(reply())
    async with api.provider(headers={"anthropic-beta": "context-1m-2025-08-07"}) as provider:
        await provider.complete(request(hosted_tools=[DOCS, WebFetch(), TICKETS]))
        await provider.complete(request(hosted_tools=[DOCS]))
        await provider.complete(request())

    both, one, none = api.requests
    assert both.headers["anthropic-beta"] == (
        "context-1m-2025-08-07,mcp-client-2025-11-20,web-fetch-2025-09-10"
    )
    assert one.headers["anthropic-beta"] == "context-1m-2025-08-07,mcp-client-2025-11-20"
    assert none.headers["anthropic-beta"] == "context-1m-2025-08-07"


async def test_the_beta_flag_alone_when_the_caller_gives_none() -> None:
    api = FakeApi(reply())
    async with api.provider() as provider:
        await provider.complete(request(hosted_tools=[TICKETS]))

    assert api.requests[0].headers["anthropic-beta"] == "mcp-client-2025-11-20"
    assert api.bodies[0]["mcp_servers"][0]["authorization_token"] == TOKEN


# --- answer -------------------------------------------------------------------


async def test_a_complete_answer_records_the_call_and_sends_the_blocks_back_whole() -> None:
    api = FakeApi(
        reply(message_json([MCP_CALL, MCP_RESULT, ANSWER])),
        reply(message_json([{"type": "text", "text": "Fixed since."}])),
    )
    async with api.provider() as provider:
        first = await provider.complete(request(hosted_tools=[TICKETS]))
        await provider.complete(
            request(
                user("Hi"),
                assistant(*first.content),
                user("And now?"),
                hosted_tools=[TICKETS],
            )
        )

    assert first.hosted_calls == (CALL,)
    assert first.content == (
        RawPart("anthropic", MCP_CALL),
        RawPart("anthropic", MCP_RESULT),
        TextPart("TICKET-12 is the one."),
    )
    assert first.stop_reason == "end_turn"
    assert api.bodies[1]["messages"][1] == {
        "role": "assistant",
        "content": [MCP_CALL, MCP_RESULT, ANSWER],
    }


async def test_an_error_result_is_recorded_without_failing_the_call() -> None:
    apology = {"type": "text", "text": "The ticket index is offline."}
    api = FakeApi(reply(message_json([MCP_CALL, MCP_ERROR, apology])))
    async with api.provider() as provider:
        response = await provider.complete(request(hosted_tools=[TICKETS]))

    assert response.hosted_calls == (CALL,)
    assert response.content[1] == RawPart("anthropic", MCP_ERROR)
    assert response.content[-1] == TextPart("The ticket index is offline.")
    assert response.stop_reason == "end_turn"


async def test_calls_on_two_servers_are_told_apart_by_server() -> None:
    docs_call = {**MCP_CALL, "id": "mcptoolu_02", "name": "read_page", "server_name": "docs"}
    docs_call["input"] = {"path": "/login"}
    api = FakeApi(reply(message_json([MCP_CALL, MCP_RESULT, docs_call, ANSWER])))
    async with api.provider() as provider:
        response = await provider.complete(request(hosted_tools=[DOCS, TICKETS]))

    assert response.hosted_calls == (
        CALL,
        HostedToolCall(
            "mcp", {"server": "docs", "tool": "read_page", "arguments": {"path": "/login"}}
        ),
    )


async def test_a_streamed_answer_gives_the_same_calls_and_blocks_and_no_call_deltas() -> None:
    call_start = {**MCP_CALL, "input": {}}
    arguments = [
        {"type": "input_json_delta", "partial_json": '{"query": "login fails",'},
        {"type": "input_json_delta", "partial_json": ' "limit": 3}'},
    ]
    text = {"type": "text", "text": ""}
    api = FakeApi(
        _stream_reply(
            _events(
                (call_start, arguments),
                (MCP_RESULT, []),
                (text, [{"type": "text_delta", "text": "TICKET-12 is the one."}]),
                reason="end_turn",
            )
        ),
        reply(message_json([{"type": "text", "text": "Fixed since."}])),
    )
    async with api.provider() as provider:
        deltas, response = await collect(provider.stream(request(hosted_tools=[TICKETS])))
        await provider.complete(
            request(user("Hi"), assistant(*response.content), hosted_tools=[TICKETS])
        )

    assert deltas == [TextDelta("TICKET-12 is the one.")]
    assert not any(isinstance(d, ToolCallStart | ToolCallDelta) for d in deltas)
    assert response.hosted_calls == (CALL,)
    assert response.content == (
        RawPart("anthropic", MCP_CALL),
        RawPart("anthropic", MCP_RESULT),
        TextPart("TICKET-12 is the one."),
    )
    assert api.bodies[0]["stream"] is True
    assert api.bodies[0]["mcp_servers"][0]["name"] == "tickets"
    assert api.bodies[1]["messages"][-1] == {
        "role": "assistant",
        "content": [MCP_CALL, MCP_RESULT, ANSWER],
    }


async def test_a_turn_grants_the_server_and_the_next_turn_sends_its_blocks_back() -> None:
    api = FakeApi(
        reply(message_json([MCP_CALL, MCP_RESULT, ANSWER])),
        reply(message_json([{"type": "text", "text": "Still TICKET-12."}])),
    )
    config = NeuronTurnConfig(hosted_tools=(TICKETS,))
    store = InMemoryStore()
    async with api.provider() as provider:
        turn = NeuronTurn(provider, config=config, state=store)
        orchestrator = LocalOrchestrator({"main": turn}, store)
        first = await orchestrator.dispatch(
            "main", TurnInput(message="Which ticket?", trigger="user", session="s")
        )
        second = await orchestrator.dispatch(
            "main", TurnInput(message="And now?", trigger="user", session="s")
        )

    assert first.exit_reason == "complete"
    assert first.message.as_text() == "TICKET-12 is the one."
    assert second.message.as_text() == "Still TICKET-12."
    first_body = api.bodies[0]
    assert first_body["mcp_servers"][0]["url"] == "https://tickets.example.com/mcp"
    assert first_body["tools"][-1]["type"] == "mcp_toolset"
    assert api.requests[0].headers["anthropic-beta"] == "mcp-client-2025-11-20"
    assert api.bodies[1]["messages"][1] == {
        "role": "assistant",
        "content": [MCP_CALL, MCP_RESULT, ANSWER],
    }


def test_the_provider_runs_mcp() -> None:
    assert "mcp" in AnthropicProvider.hosted_tools


# --- the token ----------------------------------------------------------------


def _echo(status: int, *, json_body: bool = True) -> Any:
    """Answer `status` with a body quoting the request, token and all."""

    def answer(request: httpx.Request) -> httpx.Response:
        sent = request.content.decode()
        if json_body:
            body = error_body("invalid_request_error", f"mcp_servers.0: bad server in {sent}")
            return httpx.Response(status, json=body)
        # A proxy's page, the token right across the 200-character cut of a quoted prefix.
        return httpx.Response(status, text="x" * 190 + TOKEN + sent)

    return answer


def _leaks(caplog: pytest.LogCaptureFixture, error: BaseException) -> list[str]:
    texts = [record.getMessage() for record in caplog.records]
    texts += [str(record.args) for record in caplog.records]
    chain: BaseException | None = error
    while chain is not None:
        texts += [str(chain), repr(chain), getattr(chain, "message", "")]
        chain = chain.__cause__ or chain.__context__
    return [text for text in texts if TOKEN in text or TOKEN[:12] in text]


@pytest.mark.parametrize("json_body", [True, False])
@pytest.mark.parametrize("streamed", [False, True])
async def test_the_token_is_in_no_log_record_and_no_error(
    caplog: pytest.LogCaptureFixture, streamed: bool, json_body: bool
) -> None:
    caplog.set_level(logging.DEBUG)
    api = FakeApi(_echo(400, json_body=json_body))
    async with api.provider() as provider:
        with pytest.raises(InvalidRequestError) as raised:
            if streamed:
                await collect(provider.stream(request(hosted_tools=[DOCS, TICKETS])))
            else:
                await provider.complete(request(hosted_tools=[DOCS, TICKETS]))

    assert TOKEN in api.requests[0].content.decode()  # it was sent, and echoed
    assert "[REDACTED]" in str(raised.value)  # the echo reached the message, scrubbed
    assert _leaks(caplog, raised.value) == []


async def test_a_scrubbed_error_keeps_its_wait_and_reads_a_compressed_body() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = error_body("rate_limit_error", f"slow down, {request.content.decode()}")
        return httpx.Response(
            429,
            content=gzip.compress(json.dumps(body).encode()),
            headers={
                "content-type": "application/json",
                "content-encoding": "gzip",
                "retry-after": "7",
            },
        )

    api = FakeApi(answer)
    async with api.provider() as provider:
        with pytest.raises(RateLimitError) as raised:
            await provider.complete(request(hosted_tools=[TICKETS]))

    assert raised.value.retry_after == 7.0
    assert "slow down, {" in str(raised.value)
    assert TOKEN not in str(raised.value)
    assert "[REDACTED]" in str(raised.value)


async def test_a_streamed_error_event_echoing_the_token_is_scrubbed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    event = {"type": "error", "error": {"type": "api_error", "message": f"server said {TOKEN}"}}
    api = FakeApi(_stream_reply(sse(START, event)))
    async with api.provider() as provider:
        with pytest.raises(ProviderError) as raised:
            await collect(provider.stream(request(hosted_tools=[TICKETS])))

    assert "server said [REDACTED]" in str(raised.value)
    assert _leaks(caplog, raised.value) == []


async def test_an_answer_echoing_the_token_does_not_carry_it_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    leaked = {**MCP_RESULT, "content": [{"type": "text", "text": f"whoami: {TOKEN}"}]}
    api = FakeApi(reply(message_json([MCP_CALL, leaked, ANSWER])))
    async with api.provider() as provider:
        response = await provider.complete(request(hosted_tools=[TICKETS]))

    assert TOKEN not in repr(response)
    assert response.content[1] == RawPart(
        "anthropic", {**MCP_RESULT, "content": [{"type": "text", "text": "whoami: [REDACTED]"}]}
    )
    assert not [r for r in caplog.records if TOKEN in r.getMessage()]


async def test_a_turn_at_debug_logs_no_token(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    api = FakeApi(reply(message_json([MCP_CALL, MCP_RESULT, ANSWER])))
    store = InMemoryStore()
    async with api.provider() as provider:
        turn = NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=(TICKETS,)), state=store)
        output = await LocalOrchestrator({"main": turn}, store).dispatch(
            "main", TurnInput(message="Which ticket?", trigger="user", session="s")
        )

    assert output.exit_reason == "complete"
    assert TOKEN in api.requests[0].content.decode()
    assert caplog.records  # DEBUG was on and the call was logged
    assert [r.getMessage() for r in caplog.records if TOKEN in r.getMessage()] == []
    assert TOKEN not in repr(TICKETS)
    assert TOKEN not in repr(provider)
