"""Time to first event and CPU per chunk of a streamed answer; one JSON line per scenario.

Run with `python bench/streaming.py [runs]`. A recorded stream (from
../shared/corpus when present, else a built-in one of the same shape) is
replayed through an `httpx.MockTransport` whose body waits `DELAY_S` between
chunks, as a network would. For each run it notes the moment the transport
hands over the first chunk, and the moment the first delta reaches the
caller: through the provider's own `stream()`, and through
`NeuronTurn.stream` (the turn's task, its queue and the consumer). Figures:

- `first_event_us`: from the moment the chunk carrying the first delta is on
  the wire to that delta in the caller's hands, median and p90 over the runs;
- `cpu_us_per_chunk`: process CPU time of a whole streamed answer (the call
  set-up included) divided by its chunks (the delays cost no CPU), median.

`httpx_floor` reads the same paced body with `httpx` alone (`aiter_lines`):
the part of both figures any reader pays, ours or not.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx

from layer0 import TurnInput
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_ollama import OllamaProvider
from neuron_provider_openai import OpenAIProvider
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    Provider,
    ProviderMessage,
    ProviderRequest,
    TextDelta,
    TextPart,
    ThinkingDelta,
)

DEFAULT_RUNS = 30
DELAY_S = 0.002
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "cassettes"
ANTHROPIC_RECORDING = (
    CORPUS / "anthropic" / "pydantic-ai__test_anthropic_model_thinking_part_stream.yaml"
)
OPENAI_RECORDING = CORPUS / "openai" / "llm__test_tool_use_basic.yaml"


class _Clock:
    last_chunk: float = 0.0
    """When the transport last handed over a chunk."""


class _PacedBody(httpx.AsyncByteStream):
    """Hands over `chunks` one at a time, `delay` apart, noting when the first one goes."""

    def __init__(self, chunks: list[bytes], delay: float, clock: _Clock) -> None:
        self.chunks = chunks
        self.delay = delay
        self.clock = clock

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if index:
                await asyncio.sleep(self.delay)
            self.clock.last_chunk = time.perf_counter()
            yield chunk


def _client(
    chunks: list[bytes], content_type: str, delay: float, clock: _Clock
) -> httpx.AsyncClient:
    def answer(request: httpx.Request) -> httpx.Response:
        body = _PacedBody(chunks, delay, clock)
        return httpx.Response(200, headers={"content-type": content_type}, stream=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))


def _recorded_body(path: Path, interaction: int) -> str | None:
    if not path.is_file():
        return None
    import yaml  # a test dependency; only needed to read the corpus

    body = yaml.safe_load(path.read_text())["interactions"][interaction]["response"]["body"]
    text = body["string"] if isinstance(body, dict) else body
    return text if isinstance(text, str) else None


def _anthropic_chunks() -> list[bytes]:
    text = _recorded_body(ANTHROPIC_RECORDING, 0) or _built_anthropic()
    return [event.encode() + b"\n\n" for event in text.strip().split("\n\n")]


def _built_anthropic() -> str:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-20250514",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 43, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "word "},
        }
        for _ in range(100)
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 101},
        },
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _openai_chunks() -> list[bytes]:
    text = _recorded_body(OPENAI_RECORDING, 1)
    if text is None:
        lines = [
            json.dumps(
                {"model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"content": "word "}}]}
            )
            for _ in range(100)
        ]
        lines.append(
            json.dumps(
                {
                    "model": "gpt-4o-mini",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                }
            )
        )
        text = "".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n"
    return [event.encode() + b"\n\n" for event in text.strip().split("\n\n")]


def _ollama_chunks() -> list[bytes]:
    line = {"model": "llama3", "created_at": "2026-01-01T00:00:00Z", "done": False}
    lines = [{**line, "message": {"role": "assistant", "content": "word "}} for _ in range(100)]
    lines.append(
        {
            **line,
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 20,
            "eval_count": 100,
        }
    )
    return [json.dumps(item).encode() + b"\n" for item in lines]


REQUEST = ProviderRequest("m", [ProviderMessage("user", [TextPart("Tell me a story.")])])
INPUT = TurnInput(message="Tell me a story.", trigger="user")
Factory = Callable[[httpx.AsyncClient], Provider]


async def _provider_run(provider: Any, clock: _Clock) -> float:
    latency = 0.0
    async for event in provider.stream(REQUEST):
        if not latency and isinstance(event, TextDelta | ThinkingDelta):
            latency = time.perf_counter() - clock.last_chunk
    return latency


async def _turn_run(provider: Any, clock: _Clock) -> float:
    turn = NeuronTurn(provider, config=NeuronTurnConfig(model="m"))
    latency = 0.0
    async for event in turn.stream(INPUT):
        if not latency and isinstance(event, TextDelta | ThinkingDelta):
            latency = time.perf_counter() - clock.last_chunk
    return latency


async def _floor_run(client: httpx.AsyncClient, clock: _Clock) -> float:
    """The same paced body read line by line by httpx alone: what any reader pays."""
    latency = 0.0
    async with client.stream("POST", "http://127.0.0.1/floor") as response:
        async for line in response.aiter_lines():
            if not latency and line:
                latency = time.perf_counter() - clock.last_chunk
    return latency


async def _scenario(
    name: str,
    factory: Factory,
    chunks: list[bytes],
    content_type: str,
    runs: int,
    through_turn: bool,
) -> dict[str, Any]:
    latencies: list[float] = []
    cpu_per_chunk: list[float] = []
    for _ in range(runs):
        clock = _Clock()
        async with _client(chunks, content_type, DELAY_S, clock) as client:
            cpu = time.process_time_ns()
            if name.endswith("floor"):
                latency = await _floor_run(client, clock)
            elif through_turn:
                latency = await _turn_run(factory(client), clock)
            else:
                latency = await _provider_run(factory(client), clock)
            cpu_per_chunk.append((time.process_time_ns() - cpu) / len(chunks) / 1000)
        latencies.append(latency * 1e6)
    latencies.sort()
    return {
        "scenario": name,
        "chunks": len(chunks),
        "delay_ms": DELAY_S * 1000,
        "first_event_us_median": round(statistics.median(latencies), 1),
        "first_event_us_p90": round(latencies[int(len(latencies) * 0.9) - 1], 1),
        "cpu_us_per_chunk": round(statistics.median(cpu_per_chunk), 1),
        "runs": runs,
    }


async def main(runs: int) -> None:
    anthropic = _anthropic_chunks()
    openai = _openai_chunks()
    ollama = _ollama_chunks()
    sse, ndjson = "text/event-stream", "application/x-ndjson"
    cases: list[tuple[str, Factory, list[bytes], str]] = [
        (
            "anthropic",
            lambda c: AnthropicProvider("m", api_key="sk-bench", client=c),
            anthropic,
            sse,
        ),
        ("openai", lambda c: OpenAIProvider("m", api_key="sk-bench", client=c), openai, sse),
        (
            "ollama",
            lambda c: OllamaProvider("m", base_url="http://127.0.0.1:11434", client=c),
            ollama,
            ndjson,
        ),
    ]
    print(json.dumps(await _scenario("httpx_floor", cases[0][1], anthropic, sse, runs, False)))
    for name, factory, chunks, content_type in cases:
        for through_turn in (False, True):
            label = f"{name}_{'turn' if through_turn else 'provider'}_stream"
            result = await _scenario(label, factory, chunks, content_type, runs, through_turn)
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_RUNS))
