"""Per-call overhead of `OpenAIProvider.complete`; one JSON line per scenario.

Run with `python bench/provider_openai.py [calls]`. Every call goes to a local
`httpx.MockTransport` answering a canned Chat Completions body, so the figures
are the provider's own cost (request building, JSON encoding, the httpx
client round trip, response parsing, genai-prices pricing), never the model's.
`httpx_floor` is the same POST and `json.loads` without the provider: what is
left above it is our mapping and pricing code.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from _mock_http import httpx_floor, mock_client
from _timing import Scenario, measure, run

from neuron_provider_openai import OpenAIProvider
from neuron_tool.schema import ToolSchema
from neuron_turn import ProviderMessage, ProviderRequest, TextPart

DEFAULT_CALLS = 5_000
WARMUP_CALLS = 200
URL = "https://api.openai.com/v1/chat/completions"
USAGE = {
    "prompt_tokens": 71,
    "completion_tokens": 15,
    "total_tokens": 86,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
}


def _body(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1763802312,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": USAGE,
        "service_tier": "default",
        "system_fingerprint": "fp_560af6e559",
    }


TEXT_BODY = _body(
    {"role": "assistant", "content": "The capital of France is Paris.", "refusal": None},
    "stop",
)
CITIES = ("Paris", "Rome", "Oslo")
TOOLS_BODY = _body(
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{index:024d}",
                "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
            }
            for index, city in enumerate(CITIES)
        ],
        "refusal": None,
    },
    "tool_calls",
)
WEATHER = ToolSchema(
    name="get_weather",
    description="Return the current weather in a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
TEXT_REQUEST = ProviderRequest(
    model="gpt-4o-mini",
    messages=[ProviderMessage("user", [TextPart("What is the capital of France?")])],
    system="You are a helpful assistant.",
    max_tokens=256,
)
TOOLS_REQUEST = ProviderRequest(
    model="gpt-4o-mini",
    messages=[ProviderMessage("user", [TextPart("Weather in Paris, Rome and Oslo?")])],
    system="You are a helpful assistant.",
    tools=[WEATHER],
)


_measure = functools.partial(measure, warmup=WARMUP_CALLS)


async def openai_text(calls: int) -> dict[str, Any]:
    """`complete` for a system prompt + one user message, answered with text."""
    provider = OpenAIProvider("gpt-4o-mini", api_key="sk-bench", client=mock_client(TEXT_BODY))
    return await _measure("openai_text", lambda: provider.complete(TEXT_REQUEST), calls)


async def openai_3_tool_calls(calls: int) -> dict[str, Any]:
    """`complete` with one tool schema, answered with three tool calls."""
    provider = OpenAIProvider("gpt-4o-mini", api_key="sk-bench", client=mock_client(TOOLS_BODY))
    return await _measure("openai_3_tool_calls", lambda: provider.complete(TOOLS_REQUEST), calls)


async def openai_text_local(calls: int) -> dict[str, Any]:
    """`openai_text` against a custom base_url: no key, no genai-prices lookup (0 USD)."""
    provider = OpenAIProvider(
        "gpt-4o-mini", base_url="http://localhost:8000/v1", client=mock_client(TEXT_BODY)
    )
    return await _measure("openai_text_local", lambda: provider.complete(TEXT_REQUEST), calls)


SCENARIOS: list[Scenario] = [
    httpx_floor(
        _measure, URL, TEXT_BODY, json.dumps({"model": "gpt-4o-mini", "messages": []}).encode()
    ),
    openai_text,
    openai_3_tool_calls,
    openai_text_local,
]


if __name__ == "__main__":
    run(SCENARIOS, DEFAULT_CALLS)
