"""Hosted tools on the Responses API: built-in tool entries, their limits, their items skipped."""

from __future__ import annotations

from typing import Any

import pytest

from neuron_provider_openai import OpenAIProvider, OpenAIResponsesProvider
from neuron_turn import (
    CodeExecution,
    HostedToolCall,
    NeuronTurn,
    NeuronTurnConfig,
    UnsupportedHostedToolError,
    UserLocation,
    WebFetch,
    WebSearch,
)
from neuron_turn.loop.events import TextDelta
from neuron_turn.loop.provider import ProviderMessage, TextPart
from neuron_turn.loop.provider_errors import InvalidRequestError

from ._responses_support import message, mocked, response, sse
from ._support import json_response, request, user
from .test_responses_streaming import CREATED, collect, text_events

SEARCH_CALL: dict[str, Any] = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "layer0 protocol"},
}
CITED = {
    **message("layer0 is a protocol."),
    "content": [
        {
            "type": "output_text",
            "text": "layer0 is a protocol.",
            "annotations": [
                {
                    "type": "url_citation",
                    "start_index": 0,
                    "end_index": 6,
                    "url": "https://example.com/layer0",
                    "title": "layer0",
                }
            ],
        }
    ],
}


async def test_hosted_tools_become_built_in_tool_entries() -> None:
    provider, recorder = mocked()
    location = UserLocation(city="London", region="London", country="GB")
    search = WebSearch(max_uses=2, allowed_domains=["example.com"], user_location=location)

    await provider.complete(request(hosted_tools=[search]))

    assert recorder.body["tools"] == [
        {
            "type": "web_search",
            "filters": {"allowed_domains": ["example.com"]},
            "user_location": {
                "type": "approximate",
                "city": "London",
                "region": "London",
                "country": "GB",
            },
        }
    ]
    assert recorder.body["max_tool_calls"] == 2
    assert "tool_choice" not in recorder.body


async def test_code_execution_runs_in_an_automatic_container() -> None:
    provider, recorder = mocked()
    await provider.complete(request(hosted_tools=[WebSearch(), CodeExecution()]))
    assert recorder.body["tools"] == [
        {"type": "web_search"},
        {"type": "code_interpreter", "container": {"type": "auto"}},
    ]
    assert "max_tool_calls" not in recorder.body


@pytest.mark.parametrize(
    ("hosted", "complaint"),
    [
        ([WebSearch(blocked_domains=["a.example"])], "takes allowed_domains, not blocked_domains"),
        ([WebSearch(max_uses=2), CodeExecution()], "caps all built-in tool calls"),
    ],
)
async def test_a_limit_the_api_cannot_keep_is_refused_not_dropped(
    hosted: list[Any], complaint: str
) -> None:
    provider, recorder = mocked()
    with pytest.raises(InvalidRequestError, match=complaint):
        await provider.complete(request(hosted_tools=hosted))
    assert recorder.requests == []


async def test_a_searched_answer_keeps_its_text_and_the_next_call_sends_no_search_item() -> None:
    provider, recorder = mocked(
        json_response(response(SEARCH_CALL, CITED)), json_response(response())
    )

    answer = await provider.complete(request(hosted_tools=[WebSearch()]))
    history = [user("What is layer0?"), ProviderMessage("assistant", answer.content), user("More?")]
    await provider.complete(request(*history, hosted_tools=[WebSearch()]))

    assert answer.content == [TextPart("layer0 is a protocol.")]
    assert answer.hosted_calls == (
        HostedToolCall("web_search", {"type": "search", "query": "layer0 protocol"}),
    )
    sent = recorder.body["input"]
    assert [item.get("type", item.get("role")) for item in sent] == ["user", "assistant", "user"]


async def test_a_streamed_search_passes_its_events_by_and_streams_the_answer() -> None:
    searching = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**SEARCH_CALL, "status": "in_progress"},
        },
        {"type": "response.web_search_call.in_progress", "output_index": 0, "item_id": "ws_1"},
        {"type": "response.web_search_call.searching", "output_index": 0, "item_id": "ws_1"},
        {"type": "response.web_search_call.completed", "output_index": 0, "item_id": "ws_1"},
        {"type": "response.output_item.done", "output_index": 0, "item": SEARCH_CALL},
    ]
    answer_events = [
        {**event, "output_index": 1} if "output_index" in event else event
        for event in text_events("layer0 is ", "a protocol.")
    ]
    done = {"type": "response.completed", "response": response(SEARCH_CALL, CITED)}
    provider, _ = mocked(sse(CREATED, *searching, *answer_events, done))

    deltas, answer = await collect(provider, request(hosted_tools=[WebSearch()]))

    assert deltas == [TextDelta("layer0 is "), TextDelta("a protocol.")]
    assert answer.content == [TextPart("layer0 is a protocol.")]


def test_the_responses_provider_runs_search_and_code_but_not_fetch() -> None:
    provider, _ = mocked()
    with pytest.raises(UnsupportedHostedToolError) as refused:
        NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=[WebFetch()]))
    assert (
        "does not run the hosted tool(s) web_fetch "
        "(it runs: code_execution, image_generation, mcp, web_search)" in str(refused.value)
    )


def test_chat_completions_run_no_hosted_tool_and_say_so_when_the_turn_is_made() -> None:
    provider = OpenAIProvider("gpt-5-mini", api_key="sk-test")
    with pytest.raises(UnsupportedHostedToolError, match=r"web_search \(it runs: none\)"):
        NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=[WebSearch()]))


def test_the_responses_provider_says_which_hosted_tools_it_runs() -> None:
    assert OpenAIResponsesProvider.hosted_tools == {
        "web_search",
        "code_execution",
        "mcp",
        "image_generation",
    }


async def test_code_the_api_ran_is_recorded_and_an_odd_item_is_left_out() -> None:
    ran = {"type": "code_interpreter_call", "id": "ci_1", "status": "completed", "code": "2**10"}
    odd = {"type": "web_search_call", "id": "ws_2", "action": "not an object"}
    provider, _ = mocked(json_response(response(ran, odd, message("1024"))))
    answer = await provider.complete(request(hosted_tools=[CodeExecution()]))
    assert answer.hosted_calls == (
        HostedToolCall("code_execution", {"code": "2**10"}),
        HostedToolCall("web_search", None),
    )
