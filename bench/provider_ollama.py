"""Per-call overhead of `OllamaProvider.complete`; one JSON line per scenario.

Run with `python bench/provider_ollama.py [calls]`. Every call goes to a local
`httpx.MockTransport` answering a canned `/api/chat` body, so the figures are
the provider's own cost (request building, JSON encoding, the httpx client
round trip, response parsing, pricing), never the model's. `httpx_floor` is
the same POST and `json.loads` without the provider: what is left above it is
our mapping code.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from _mock_http import httpx_floor, mock_client
from _timing import Scenario, measure, run

from neuron_provider_ollama import OllamaProvider
from neuron_tool.schema import ToolSchema
from neuron_turn import ProviderMessage, ProviderRequest, TextPart

DEFAULT_CALLS = 5_000
WARMUP_CALLS = 200
URL = "http://localhost:11434/api/chat"

TEXT_BODY = {
    "model": "llama3.2",
    "created_at": "2026-11-20T10:12:41.208364Z",
    "message": {"role": "assistant", "content": "The capital of France is Paris."},
    "done_reason": "stop",
    "done": True,
    "prompt_eval_count": 38,
    "eval_count": 8,
}
CITIES = ("Paris", "Rome", "Oslo")
TOOLS_BODY = {
    **TEXT_BODY,
    "message": {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": city}}} for city in CITIES
        ],
    },
}
WEATHER = ToolSchema(
    name="get_weather",
    description="Get the current weather for a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city name"}},
        "required": ["city"],
    },
)
TEXT_REQUEST = ProviderRequest(
    model="llama3.2",
    messages=[ProviderMessage("user", [TextPart("What is the capital of France?")])],
    system="You are a concise assistant.",
    max_tokens=256,
)
TOOLS_REQUEST = ProviderRequest(
    model="llama3.2",
    messages=[ProviderMessage("user", [TextPart("Weather in Paris, Rome and Oslo?")])],
    tools=[WEATHER],
)


CONTENT_TYPE = "application/json; charset=utf-8"
_measure = functools.partial(measure, warmup=WARMUP_CALLS)


async def ollama_text(calls: int) -> dict[str, Any]:
    """`complete` for a system prompt + one user message, answered with text."""
    provider = OllamaProvider(
        "llama3.2", base_url="http://localhost:11434", client=mock_client(TEXT_BODY, CONTENT_TYPE)
    )
    return await _measure("ollama_text", lambda: provider.complete(TEXT_REQUEST), calls)


async def ollama_3_tool_calls(calls: int) -> dict[str, Any]:
    """`complete` with one tool schema, answered with three tool calls (ids synthesised)."""
    provider = OllamaProvider(
        "llama3.2", base_url="http://localhost:11434", client=mock_client(TOOLS_BODY, CONTENT_TYPE)
    )
    return await _measure("ollama_3_tool_calls", lambda: provider.complete(TOOLS_REQUEST), calls)


SCENARIOS: list[Scenario] = [
    httpx_floor(
        _measure,
        URL,
        TEXT_BODY,
        json.dumps({"model": "llama3.2", "messages": [], "stream": False}).encode(),
        content_type=CONTENT_TYPE,
    ),
    ollama_text,
    ollama_3_tool_calls,
]


if __name__ == "__main__":
    run(SCENARIOS, DEFAULT_CALLS)
