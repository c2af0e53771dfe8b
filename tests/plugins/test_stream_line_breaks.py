"""A model's text may hold any character: a stream breaks lines at CR LF, CR and LF only.

JSON carries U+2028, U+2029 and U+0085 unescaped inside strings (Go's encoder
escapes the first two, not U+0085; Python's with `ensure_ascii=False` none).
Before, every provider read its stream with httpx's `aiter_lines`, which also
splits there, so a model writing one broke its event's JSON in two and the
whole call failed as a ProviderResponseError, not to be retried.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_google import GoogleProvider
from neuron_provider_ollama import OllamaProvider
from neuron_provider_openai import OpenAIProvider, OpenAIResponsesProvider
from neuron_turn import ProviderMessage, ProviderRequest, ProviderResponse, TextPart
from neuron_turn.loop.events import TextDelta

from .provider_google._support import response as google_response
from .provider_openai._responses_support import message, response
from .test_hostile_answers import _STREAMS

_TEXT = "one\u2028two\u2029three\x85four"
_REQUEST = ProviderRequest(model="", messages=[ProviderMessage("user", [TextPart("Hi")])])


def _with_text(events: list[Any]) -> list[Any]:
    """`events` with the text "Hi" they carry replaced by `_TEXT`."""
    return json.loads(json.dumps(events).replace('"Hi"', json.dumps(_TEXT)))


def _sse(events: list[Any], *, named: bool = False, done: bool = False) -> str:
    lines = [
        (f"event: {event['type']}\n" if named else "")
        + f"data: {json.dumps(event, ensure_ascii=False)}\n\n"
        for event in events
    ]
    return "".join(lines) + ("data: [DONE]\n\n" if done else "")


def _responses_events() -> list[Any]:
    item = message(_TEXT)
    return [
        {"type": "response.created", "response": response(status="in_progress", output=[])},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": _TEXT,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": response(item)},
    ]


_CASES: dict[str, tuple[Callable[[httpx.AsyncClient], Any], str, str]] = {
    "openai": (
        lambda client: OpenAIProvider("gpt-4o-mini", client=client, api_key="sk-x"),
        _sse(_with_text(_STREAMS["openai"]), done=True),
        "text/event-stream",
    ),
    "responses": (
        lambda client: OpenAIResponsesProvider("gpt-5-mini", client=client, api_key="sk-x"),
        _sse(
            [{**event, "sequence_number": n} for n, event in enumerate(_responses_events())],
            named=True,
        ),
        "text/event-stream",
    ),
    "anthropic": (
        lambda client: AnthropicProvider("claude-haiku-4-5", client=client, api_key="sk-ant"),
        _sse(_with_text(_STREAMS["anthropic"]), named=True),
        "text/event-stream",
    ),
    "google": (
        lambda client: GoogleProvider("gemini-2.5-flash", client=client, api_key="g-key"),
        _sse([google_response({"text": _TEXT})]),
        "text/event-stream",
    ),
    "ollama": (
        lambda client: OllamaProvider("llama3.2", client=client, base_url="http://localhost:11434"),
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in _with_text(_STREAMS["ollama"])),
        "application/x-ndjson",
    ),
}


async def _stream(name: str) -> list[Any]:
    make, body, content_type = _CASES[name]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body.encode(), headers={"content-type": content_type})

    provider = make(httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    return [event async for event in provider.stream(_REQUEST)]


@pytest.mark.parametrize("name", sorted(_CASES))
def test_line_and_paragraph_separators_in_a_models_text_reach_the_answer_whole(name: str) -> None:
    events = asyncio.run(_stream(name))
    answer = events[-1]
    assert isinstance(answer, ProviderResponse)
    assert [part.text for part in answer.content if isinstance(part, TextPart)] == [_TEXT]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == _TEXT


def test_a_streamed_body_read_whole_keeps_line_separators_in_the_text() -> None:
    # Anthropic's complete(stream=True) reads the event stream whole and folds it.
    _, body, content_type = _CASES["anthropic"]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body.encode(), headers={"content-type": content_type})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = AnthropicProvider("claude-haiku-4-5", client=client, api_key="sk-ant", stream=True)
    answer = asyncio.run(provider.complete(_REQUEST))
    assert [part.text for part in answer.content if isinstance(part, TextPart)] == [_TEXT]
