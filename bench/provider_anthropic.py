"""Per-call overhead of `AnthropicProvider.complete`; one JSON line per scenario.

Run with `python bench/provider_anthropic.py [calls]`. Every call goes to a local
`httpx.MockTransport` answering a canned Messages API body, so the figures are
the provider's own cost (request building, JSON encoding, the httpx client
round trip, response parsing, genai-prices pricing), never the model's.
`anthropic_httpx_floor` is the same POST and `json.loads` without the provider:
what is left above it is our mapping and pricing code.
"""

from __future__ import annotations

from typing import Any

from _mock_http import httpx_floor, mock_client
from _timing import Call, Scenario, per_call_us, run, time_calls

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


def _body(content: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    return {
        "id": "msg_01BENCH",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": USAGE,
    }


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


async def _measure(scenario: str, call: Call, calls: int) -> dict[str, Any]:
    """`_timing.measure` but with this benchmark's own keys: `wall_us_per_call`, 2 decimals."""
    wall, cpu = await time_calls(call, calls, WARMUP_CALLS)
    return {
        "scenario": scenario,
        "calls": calls,
        "cpu_us_per_call": per_call_us(cpu, calls, 2),
        "wall_us_per_call": per_call_us(wall, calls, 2),
    }


async def _provider_scenario(scenario: str, body: dict[str, Any], calls: int) -> dict[str, Any]:
    async with AnthropicProvider(
        "claude-haiku-4-5", api_key="bench", client=mock_client(body)
    ) as provider:
        return await _measure(scenario, lambda: provider.complete(REQUEST), calls)


async def anthropic_text(calls: int) -> dict[str, Any]:
    return await _provider_scenario("anthropic_text", TEXT_BODY, calls)


async def anthropic_3_tool_calls(calls: int) -> dict[str, Any]:
    return await _provider_scenario("anthropic_3_tool_calls", TOOLS_BODY, calls)


SCENARIOS: list[Scenario] = [
    anthropic_text,
    anthropic_3_tool_calls,
    httpx_floor(
        _measure, URL, TEXT_BODY, b'{"model":"claude-haiku-4-5"}', scenario="anthropic_httpx_floor"
    ),
]


if __name__ == "__main__":
    run(SCENARIOS, DEFAULT_CALLS)
