"""Per-call overhead of `OllamaProvider.complete`; one JSON line per scenario.

Run with `python bench/provider_ollama.py [calls]`. Every call goes to a local
`httpx.MockTransport` answering a canned `/api/chat` body, so the figures are
the provider's own cost (request building, JSON encoding, the httpx client
round trip, response parsing, pricing), never the model's. `httpx_floor` is
the same POST and `json.loads` without the provider: what is left above it is
our mapping code.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

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


def _client(body: dict[str, Any]) -> httpx.AsyncClient:
    content = json.dumps(body).encode()
    headers = {"content-type": "application/json; charset=utf-8"}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers=headers)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def _measure(
    scenario: str, call: Callable[[], Awaitable[object]], calls: int
) -> dict[str, Any]:
    for _ in range(WARMUP_CALLS):
        await call()
    wall_start, cpu_start = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(calls):
        await call()
    wall, cpu = time.perf_counter_ns() - wall_start, time.process_time_ns() - cpu_start
    return {
        "scenario": scenario,
        "us_per_call": round(wall / calls / 1000, 3),
        "cpu_us_per_call": round(cpu / calls / 1000, 3),
        "calls": calls,
    }


async def httpx_floor(calls: int) -> dict[str, Any]:
    """Baseline: the same POST through the same mock transport, plus `json.loads`."""
    client = _client(TEXT_BODY)
    payload = json.dumps({"model": "llama3.2", "messages": [], "stream": False}).encode()

    async def call() -> object:
        response = await client.post(URL, content=payload)
        return json.loads(response.content)

    return await _measure("httpx_floor", call, calls)


async def ollama_text(calls: int) -> dict[str, Any]:
    """`complete` for a system prompt + one user message, answered with text."""
    provider = OllamaProvider(
        "llama3.2", base_url="http://localhost:11434", client=_client(TEXT_BODY)
    )
    return await _measure("ollama_text", lambda: provider.complete(TEXT_REQUEST), calls)


async def ollama_3_tool_calls(calls: int) -> dict[str, Any]:
    """`complete` with one tool schema, answered with three tool calls (ids synthesised)."""
    provider = OllamaProvider(
        "llama3.2", base_url="http://localhost:11434", client=_client(TOOLS_BODY)
    )
    return await _measure("ollama_3_tool_calls", lambda: provider.complete(TOOLS_REQUEST), calls)


SCENARIOS: list[Callable[[int], Awaitable[dict[str, Any]]]] = [
    httpx_floor,
    ollama_text,
    ollama_3_tool_calls,
]


async def _run(calls: int) -> None:
    for scenario in SCENARIOS:
        print(json.dumps(await scenario(calls)), flush=True)


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CALLS
    asyncio.run(_run(calls))


if __name__ == "__main__":
    main()
