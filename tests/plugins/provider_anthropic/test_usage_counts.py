"""A token count below zero is no usage: the answer is refused, not summed into the turn's.

Before, Anthropic's `usage` was read as any integer, so a gateway (or proxy)
sending `input_tokens: -1000000000` gave a response whose usage took a
billion tokens off the turn's totals, past any token limit, and whose price
could not be computed; the other providers' answers already never count below
zero.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import httpx
import pytest

from neuron_provider_anthropic import AnthropicProvider
from neuron_turn.loop.provider_errors import ProviderResponseError
from tests.plugins.test_hostile_answers import _REQUEST, _STREAMS

from ._support import message_json


def _provider(content: bytes, content_type: str) -> AnthropicProvider:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers={"content-type": content_type})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return AnthropicProvider("claude-haiku-4-5", client=client, api_key="sk-ant-x")


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": -1_000_000_000, "output_tokens": 5},
        {"input_tokens": 10, "output_tokens": -1},
        {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": -20},
        {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": -20},
    ],
)
def test_an_answer_counting_tokens_below_zero_is_refused(usage: dict[str, int]) -> None:
    body = {**message_json([{"type": "text", "text": "Hi"}]), "usage": usage}
    provider = _provider(json.dumps(body).encode(), "application/json")
    with pytest.raises(ProviderResponseError, match="not a count"):
        asyncio.run(provider.complete(_REQUEST))


def test_a_stream_counting_tokens_below_zero_is_refused() -> None:
    events: list[Any] = copy.deepcopy(_STREAMS["anthropic"])
    events[-2]["usage"] = {"output_tokens": -5}
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    provider = _provider(body.encode(), "text/event-stream")

    async def stream() -> None:
        async for _ in provider.stream(_REQUEST):
            pass

    with pytest.raises(ProviderResponseError, match="not a count"):
        asyncio.run(stream())


def test_a_count_of_zero_is_read() -> None:
    body = {
        **message_json([{"type": "text", "text": "Hi"}]),
        "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0},
    }
    answer = asyncio.run(
        _provider(json.dumps(body).encode(), "application/json").complete(_REQUEST)
    )
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (0, 0)
