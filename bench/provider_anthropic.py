"""Per-call overhead of `AnthropicProvider.complete`; one JSON line per scenario.

Run with `python bench/provider_anthropic.py [calls]`. Every call goes to a local
`httpx.MockTransport` answering a canned Messages API body, so the figures are
the provider's own cost (request building, JSON encoding, the httpx client
round trip, response parsing, genai-prices pricing), never the model's.
`anthropic_httpx_floor` is the same POST and `json.loads` without the provider:
what is left above it is our mapping and pricing code.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from neuron_provider_anthropic import AnthropicProvider
from neuron_tool.schema import ToolSchema
from neuron_turn import ProviderMessage, ProviderRequest, TextPart

DEFAULT_CALLS = 5_000
WARMUP_CALLS = 200
URL = "https://api.anthropic.com/v1/messages"
USAGE = {
    "input_tokens": 412,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
    "output_tokens": 68,
    "service_tier": "standard",
}


def _body(content: list[dict[str, Any]], stop_reason: str) -> bytes:
    return json.dumps(
        {
            "id": "msg_01BENCH",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5-20251001",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": USAGE,
        }
    ).encode()


TEXT_BODY = _body([{"type": "text", "text": "The capital of France is Paris."}], "end_turn")
CITIES = ("Paris", "Rome", "Oslo")
TOOLS_BODY = _body(
    [{"type": "text", "text": "Checking all three."}]
    + [
        {
            "type": "tool_use",
            "id": f"toolu_{index:024d}",
            "name": "get_weather",
            "input": {"city": city},
        }
        for index, city in enumerate(CITIES)
    ],
    "tool_use",
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
REQUEST = ProviderRequest(
    model="claude-haiku-4-5",
    messages=[ProviderMessage("user", [TextPart("What is the weather in Paris, Rome and Oslo?")])],
    tools=[WEATHER],
    system="You are a helpful assistant.",
)


def _client(body: bytes) -> httpx.AsyncClient:
    headers = {"content-type": "application/json"}
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, content=body, headers=headers)
    )
    return httpx.AsyncClient(transport=transport)


async def _measure(
    scenario: str, call: Callable[[], Awaitable[object]], calls: int
) -> dict[str, Any]:
    for _ in range(WARMUP_CALLS):
        await call()
    wall_start, cpu_start = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(calls):
        await call()
    cpu, wall = time.process_time_ns() - cpu_start, time.perf_counter_ns() - wall_start
    return {
        "scenario": scenario,
        "calls": calls,
        "cpu_us_per_call": round(cpu / calls / 1000, 2),
        "wall_us_per_call": round(wall / calls / 1000, 2),
    }


async def _provider_scenario(scenario: str, body: bytes, calls: int) -> dict[str, Any]:
    async with AnthropicProvider(
        "claude-haiku-4-5", api_key="bench", client=_client(body)
    ) as provider:
        return await _measure(scenario, lambda: provider.complete(REQUEST), calls)


async def _floor(calls: int) -> dict[str, Any]:
    async with _client(TEXT_BODY) as client:

        async def post() -> object:
            response = await client.post(URL, content=b'{"model":"claude-haiku-4-5"}')
            return json.loads(response.content)

        return await _measure("anthropic_httpx_floor", post, calls)


async def main(calls: int) -> None:
    for result in (
        await _provider_scenario("anthropic_text", TEXT_BODY, calls),
        await _provider_scenario("anthropic_3_tool_calls", TOOLS_BODY, calls),
        await _floor(calls),
    ):
        print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CALLS))
