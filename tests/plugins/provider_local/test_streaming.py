"""`LocalProvider.stream`: the embedded server's events, text that may be a call held back."""

from __future__ import annotations

import json
from typing import Any

import httpx

from neuron_provider_local import LocalProvider
from neuron_turn.loop.events import TextDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.provider import ProviderRequest, TextPart, ToolUsePart
from tests.plugins.chunked import collect

from ._support import BASE_URL, completion, scripted_client, server_error, tool, user

SERVED = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def sse(*pieces: str, calls: list[dict[str, Any]] | None = None) -> httpx.Response:
    """A streamed answer: one chunk per text piece, then the finish and the usage."""
    chunks = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    if calls:
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
    finish = "tool_calls" if calls else "stop"
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({"choices": [], "usage": {"prompt_tokens": 90, "completion_tokens": 9}})
    lines = [f"data: {json.dumps({'model': SERVED, **chunk})}\n\n" for chunk in chunks]
    text = "".join(lines) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=text)


async def stream_with(
    answers: list[httpx.Response], request: ProviderRequest
) -> tuple[list[Any], Any, list[dict[str, Any]]]:
    queue = iter(answers)
    client, bodies = scripted_client(lambda body: next(queue))
    async with client, LocalProvider(SERVED, base_url=BASE_URL, client=client) as provider:
        deltas, final = await collect(provider.stream(request))
    return deltas, final, bodies


def calculator_request() -> ProviderRequest:
    return ProviderRequest("default", [user("What is 17*23?")], tools=[tool("calculator")])


async def test_without_tools_text_passes_on_as_it_arrives() -> None:
    request = ProviderRequest("default", [user("Say hello")])
    deltas, final, bodies = await stream_with([sse("Hel", "lo!")], request)

    assert deltas == [TextDelta("Hel"), TextDelta("lo!")]
    assert final.content == [TextPart("Hello!")]
    assert bodies[0]["stream"] is True


async def test_calls_the_server_parsed_pass_on_as_call_deltas() -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "calculator", "arguments": "{}"}}
    deltas, final, _ = await stream_with([sse(calls=[call])], calculator_request())

    assert deltas == [ToolCallStart("c1", "calculator"), ToolCallDelta("c1", "{}")]
    assert final.stop_reason == "tool_use"


async def test_with_tools_plain_text_still_passes_on() -> None:
    deltas, final, _ = await stream_with([sse("It is ", "391.")], calculator_request())

    assert deltas == [TextDelta("It is "), TextDelta("391.")]
    assert final.content == [TextPart("It is 391.")]


async def test_with_tools_a_call_written_as_text_is_held_back_and_read_as_a_call() -> None:
    pieces = ['{"name": "calculator", ', '"arguments": {"expression": "17*23"}}']
    deltas, final, _ = await stream_with([sse(*pieces)], calculator_request())

    [part] = final.content
    assert isinstance(part, ToolUsePart) and part.input == {"expression": "17*23"}
    assert deltas == [
        ToolCallStart(part.id, "calculator"),
        ToolCallDelta(part.id, '{"expression":"17*23"}'),
    ]
    assert final.stop_reason == "tool_use"


async def test_an_unreadable_streamed_output_is_retried_raw_once() -> None:
    raw = '{"name": "calculator", "arguments": {"expression": "17*23"}}'
    answers = [httpx.Response(500, json=server_error()), httpx.Response(200, json=completion(raw))]
    deltas, final, bodies = await stream_with(answers, calculator_request())

    assert bodies[1]["tool_choice"] == "none"
    [part] = final.content
    assert isinstance(part, ToolUsePart) and part.name == "calculator"
    assert [type(d).__name__ for d in deltas] == ["ToolCallStart", "ToolCallDelta"]
