"""Remote MCP servers on the Responses API: `mcp` tool entries, calls recorded, the token hidden."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest

from layer0 import TurnInput
from neuron_provider_openai import OpenAIProvider, OpenAIResponsesProvider
from neuron_turn import (
    HostedMCP,
    HostedToolCall,
    ModelCallDone,
    NeuronTurn,
    NeuronTurnConfig,
    UnsupportedHostedToolError,
    WebSearch,
    event_json,
)
from neuron_turn.loop.events import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.provider import ProviderMessage, TextPart
from neuron_turn.loop.provider_errors import ProviderError

from ._responses_support import message, mocked, response, sse
from ._support import json_response, request, user
from .test_responses_streaming import CREATED, collect, text_events

TOKEN = "mcp-bearer-7f3c9a1e5d2b4c68SECRET"
"""A fake MCP server token; the secret tests assert it never leaks."""

DOCS = HostedMCP(
    "docs",
    "https://docs.example.com/mcp",
    allowed_tools=["search_docs", "read_page"],
    authorization=TOKEN,
)
TRACKER = HostedMCP("tracker", "https://tracker.example.com/mcp")

LISTED: dict[str, Any] = {
    "type": "mcp_list_tools",
    "id": "mcpl_1",
    "server_label": "docs",
    "tools": [
        {
            "name": "search_docs",
            "description": "Search the docs.",
            "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
            "annotations": None,
        }
    ],
    "error": None,
}
CALLED: dict[str, Any] = {
    "type": "mcp_call",
    "id": "mcp_1",
    "status": "completed",
    "server_label": "docs",
    "name": "search_docs",
    "arguments": '{"query":"layer0 protocol"}',
    "output": "layer0 is a protocol for agent turns. " * 50,
    "error": None,
    "approval_request_id": None,
}
RECORDED = HostedToolCall(
    "mcp",
    {
        "server": "docs",
        "tool": "search_docs",
        "arguments": {"query": "layer0 protocol"},
        "error": None,
    },
)
ANSWER = message("layer0 is a protocol.")


# --- request -----------------------------------------------------------------


async def test_one_server_becomes_an_mcp_entry_with_its_tools_and_token() -> None:
    provider, recorder = mocked()

    await provider.complete(request(hosted_tools=[DOCS]))

    assert recorder.body["tools"] == [
        {
            "type": "mcp",
            "server_label": "docs",
            "server_url": "https://docs.example.com/mcp",
            "require_approval": "never",
            "allowed_tools": ["search_docs", "read_page"],
            "authorization": TOKEN,
        }
    ]
    assert "max_tool_calls" not in recorder.body
    assert "tool_choice" not in recorder.body


async def test_two_servers_go_by_label_each_with_only_what_it_was_given() -> None:
    provider, recorder = mocked()
    empty = HostedMCP("empty", "https://empty.example.com/mcp", allowed_tools=[])

    await provider.complete(request(hosted_tools=[TRACKER, WebSearch(), empty]))

    assert recorder.body["tools"] == [
        {
            "type": "mcp",
            "server_label": "tracker",
            "server_url": "https://tracker.example.com/mcp",
            "require_approval": "never",
        },
        {"type": "web_search"},
        {
            "type": "mcp",
            "server_label": "empty",
            "server_url": "https://empty.example.com/mcp",
            "require_approval": "never",
            "allowed_tools": [],
        },
    ]


# --- answers -----------------------------------------------------------------


async def test_a_server_call_is_recorded_and_the_next_call_sends_no_mcp_item() -> None:
    provider, recorder = mocked(
        json_response(response(LISTED, CALLED, ANSWER)), json_response(response())
    )

    answer = await provider.complete(request(hosted_tools=[DOCS]))
    history = [user("What is layer0?"), ProviderMessage("assistant", answer.content), user("More?")]
    await provider.complete(request(*history, hosted_tools=[DOCS]))

    assert answer.content == [TextPart("layer0 is a protocol.")]
    assert answer.stop_reason == "end_turn"
    assert answer.hosted_calls == (RECORDED,)
    sent = recorder.body["input"]
    assert [item.get("type", item.get("role")) for item in sent] == ["user", "assistant", "user"]
    assert "mcp" not in json.dumps(sent)


def _mcp_events() -> list[dict[str, Any]]:
    """The events of a listing and a call, at output indexes 0 and 1."""
    started = {**CALLED, "status": "in_progress", "arguments": "", "output": None}
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": {**LISTED, "tools": []}},
        {"type": "response.mcp_list_tools.in_progress", "output_index": 0, "item_id": "mcpl_1"},
        {"type": "response.mcp_list_tools.completed", "output_index": 0, "item_id": "mcpl_1"},
        {"type": "response.output_item.done", "output_index": 0, "item": LISTED},
        {"type": "response.output_item.added", "output_index": 1, "item": started},
        {"type": "response.mcp_call.in_progress", "output_index": 1, "item_id": "mcp_1"},
        {
            "type": "response.mcp_call_arguments.delta",
            "output_index": 1,
            "item_id": "mcp_1",
            "delta": '{"query":"layer0 protocol"}',
        },
        {
            "type": "response.mcp_call_arguments.done",
            "output_index": 1,
            "item_id": "mcp_1",
            "arguments": '{"query":"layer0 protocol"}',
        },
        {"type": "response.mcp_call.completed", "output_index": 1, "item_id": "mcp_1"},
        {"type": "response.output_item.done", "output_index": 1, "item": CALLED},
    ]


@pytest.mark.parametrize("final_output", ["whole", "empty"])
async def test_a_streamed_server_call_passes_by_and_the_answer_streams(final_output: str) -> None:
    answer_events = [
        {**event, "output_index": 2} if "output_index" in event else event
        for event in text_events("layer0 is ", "a protocol.")
    ]
    # A compatible server may end with an empty output: the items come from the done events.
    output = [LISTED, CALLED, ANSWER] if final_output == "whole" else []
    done = {"type": "response.completed", "response": response(output=output)}
    provider, recorder = mocked(sse(CREATED, *_mcp_events(), *answer_events, done))

    deltas, answer = await collect(provider, request(hosted_tools=[DOCS]))

    assert recorder.body["stream"] is True
    assert recorder.body["tools"][0]["server_label"] == "docs"
    assert deltas == [TextDelta("layer0 is "), TextDelta("a protocol.")]
    assert not any(isinstance(d, ToolCallStart | ToolCallDelta | ThinkingDelta) for d in deltas)
    assert answer.content == [TextPart("layer0 is a protocol.")]
    assert answer.hosted_calls == (RECORDED,)


async def test_a_failed_server_call_is_recorded_with_its_error_and_raw_arguments() -> None:
    failed = {
        **CALLED,
        "status": "failed",
        "arguments": "{not json",
        "output": None,
        "error": "tool search_docs failed: upstream timeout",
    }
    provider, _ = mocked(json_response(response(LISTED, failed, message("The search failed."))))

    answer = await provider.complete(request(hosted_tools=[DOCS]))

    assert answer.content == [TextPart("The search failed.")]
    assert answer.hosted_calls == (
        HostedToolCall(
            "mcp",
            {
                "server": "docs",
                "tool": "search_docs",
                "arguments": "{not json",
                "error": "tool search_docs failed: upstream timeout",
            },
        ),
    )


async def test_two_servers_calls_are_recorded_by_label_in_order() -> None:
    other = {**CALLED, "id": "mcp_2", "server_label": "tracker", "name": "open_issues"}
    other["arguments"] = "{}"
    provider, _ = mocked(json_response(response(CALLED, other, ANSWER)))

    answer = await provider.complete(request(hosted_tools=[DOCS, TRACKER]))

    assert [call.input["server"] for call in answer.hosted_calls] == ["docs", "tracker"]  # type: ignore[index,call-overload]
    assert answer.hosted_calls[1] == HostedToolCall(
        "mcp", {"server": "tracker", "tool": "open_issues", "arguments": {}, "error": None}
    )


# --- a whole turn ------------------------------------------------------------


async def test_a_turn_granting_a_server_completes_with_its_call_in_the_record() -> None:
    provider, recorder = mocked(json_response(response(LISTED, CALLED, ANSWER)))
    turn = NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=(DOCS,)))

    events = [e async for e in turn.stream(TurnInput(message="What is layer0?", trigger="user"))]

    (done,) = [e for e in events if isinstance(e, ModelCallDone)]
    assert done.hosted_calls == (RECORDED,)
    assert event_json(done)["hosted_calls"] == [{"name": "mcp", "input": RECORDED.input}]
    assert TOKEN not in json.dumps(event_json(done))
    assert recorder.body["tools"][0]["server_label"] == "docs"
    assert recorder.body["tools"][0]["authorization"] == TOKEN


async def test_a_turn_over_mcp_returns_the_answer_text() -> None:
    provider, _ = mocked(json_response(response(LISTED, CALLED, ANSWER)))
    turn = NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=(DOCS,)))

    output = await turn.execute(TurnInput(message="What is layer0?", trigger="user"))

    assert output.exit_reason == "complete"
    assert turn.output_value(output) == "layer0 is a protocol."


# --- the token, a secret -----------------------------------------------------


def _echo_400(req: httpx.Request) -> httpx.Response:
    """An error body echoing the request, token and all."""
    sent = req.content.decode()
    assert TOKEN in sent  # the body does carry it: what is hidden below was there to hide
    error = {"message": f"Invalid tools: {sent}", "type": "invalid_request_error", "code": None}
    return httpx.Response(400, json={"error": error})


def _leaks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if TOKEN in record.getMessage() or TOKEN in (record.exc_text or "")
    ]


@pytest.mark.parametrize("streamed", [False, True])
async def test_the_token_is_in_no_log_line_and_no_error(
    streamed: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    provider, recorder = mocked(_echo_400)
    req = request(hosted_tools=[DOCS, TRACKER])

    with pytest.raises(ProviderError) as raised:
        if streamed:
            await collect(provider, req)
        else:
            await provider.complete(req)

    assert len(recorder.requests) == 1
    assert raised.value.status_code == 400
    assert "Invalid tools" in str(raised.value)
    assert "docs.example.com" in str(raised.value)  # the echo is quoted, only the token hidden
    assert TOKEN not in str(raised.value)
    assert TOKEN not in repr(raised.value)
    assert all(TOKEN not in str(arg) for arg in raised.value.args)
    assert caplog.records  # DEBUG logging was on and the call logged
    assert _leaks(caplog) == []
    assert TOKEN not in repr(req)
    assert TOKEN not in repr(DOCS)


async def test_an_answer_echoing_the_token_carries_it_nowhere(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    echoed = {**CALLED, "arguments": json.dumps({"query": f"token {TOKEN}"})}
    provider, _ = mocked(json_response(response(LISTED, echoed, message(f"It was {TOKEN}."))))

    answer = await provider.complete(request(hosted_tools=[DOCS]))

    assert TOKEN not in repr(answer)
    assert answer.hosted_calls[0].input["arguments"] == {"query": "token [REDACTED]"}  # type: ignore[index,call-overload]
    assert answer.content == [TextPart("It was [REDACTED].")]
    assert _leaks(caplog) == []


async def test_an_error_event_echoing_the_token_in_a_stream_hides_it() -> None:
    failed = {
        "type": "error",
        "code": "invalid_request_error",
        "message": f"the MCP server refused the token {TOKEN}",
    }
    provider, _ = mocked(sse(CREATED, failed))

    with pytest.raises(ProviderError) as raised:
        await collect(provider, request(hosted_tools=[DOCS]))

    assert "refused the token" in str(raised.value)
    assert TOKEN not in str(raised.value)


async def test_a_later_call_without_the_server_keeps_nothing_of_its_token() -> None:
    provider, _ = mocked(json_response(response(message(f"Echo {TOKEN}"))))

    await provider.complete(request(hosted_tools=[DOCS]))
    later = await provider.complete(request())

    # The token is no secret of a call that did not send it (nothing is kept between calls).
    assert later.content == [TextPart(f"Echo {TOKEN}")]


# --- which providers take it ---------------------------------------------------


def test_the_responses_provider_runs_mcp() -> None:
    assert "mcp" in OpenAIResponsesProvider.hosted_tools
    provider, _ = mocked()
    NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=(DOCS, TRACKER)))


def test_a_chat_completions_turn_with_a_server_is_refused_when_made() -> None:
    assert "mcp" not in getattr(OpenAIProvider, "hosted_tools", frozenset())
    provider = OpenAIProvider("gpt-5-mini", api_key="sk-test")
    with pytest.raises(UnsupportedHostedToolError, match=r"mcp \(it runs: none\)") as refused:
        NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=(DOCS,)))
    assert TOKEN not in str(refused.value)


async def test_a_server_whose_tools_could_not_be_listed_is_recorded_with_the_error() -> None:
    failed = {**LISTED, "tools": [], "error": "424: the server answered 401 Unauthorized"}
    answer = message("I could not reach the docs server.")
    provider, _ = mocked(json_response(response(failed, answer)))

    completion = await provider.complete(request(hosted_tools=[DOCS]))

    assert completion.hosted_calls == (
        HostedToolCall(
            "mcp",
            {
                "server": "docs",
                "tool": None,
                "arguments": None,
                "error": "424: the server answered 401 Unauthorized",
            },
        ),
    )
    # A listing that worked is no call.
    provider, _ = mocked(json_response(response(LISTED, answer)))
    assert (await provider.complete(request(hosted_tools=[DOCS]))).hosted_calls == ()
