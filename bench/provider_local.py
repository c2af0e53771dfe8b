"""The embedded default model's real speed; one JSON line per scenario.

Run with `python bench/provider_local.py [runs]` (default 3) on a quiet machine:
the figures are the model's, on this CPU, so they move with any other load.

- `start`: `LocalProvider.start()` with the default model already joined into
  the cache (child process, engine import, model load).
- `answer`: one request without tools whose answer is about 120 tokens.
- `prompt`: one request whose prompt is about 1000 tokens, answered in a few.

Both send `cache_prompt: false`, so every run processes its whole prompt.
- `calculator_turn`: a whole `NeuronTurn` that calls `calculator` for 17*23
  and answers (two model calls).

Tokens per second are the answer's tokens over the request's wall time, prompt
processing included.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any

from layer0 import TurnInput
from neuron_provider_local import LocalProvider
from neuron_turn import NeuronTurn, ProviderMessage, ProviderRequest, TextPart

DEFAULT_RUNS = 3


def _line(scenario: str, walls: list[float], **extra: Any) -> str:
    return json.dumps(
        {
            "scenario": scenario,
            "median_s": round(statistics.median(walls), 3),
            "max_s": round(max(walls), 3),
            "runs": len(walls),
            **extra,
        }
    )


def _request(text: str, max_tokens: int) -> ProviderRequest:
    message = ProviderMessage("user", [TextPart(text)])
    return ProviderRequest(
        model="default",
        messages=[message],
        max_tokens=max_tokens,
        extra={"cache_prompt": False},
    )


async def start(runs: int) -> str:
    walls = []
    for _ in range(runs):
        provider = LocalProvider("default", progress=False)
        began = time.perf_counter()
        await provider.start()
        walls.append(time.perf_counter() - began)
        await provider.aclose()
    return _line("start", walls)


async def answer(runs: int, scenario: str, text: str, max_tokens: int) -> str:
    walls, rates = [], []
    async with LocalProvider("default", progress=False) as provider:
        await provider.start()
        for _ in range(runs):
            began = time.perf_counter()
            response = await provider.complete(_request(text, max_tokens))
            wall = time.perf_counter() - began
            walls.append(wall)
            rates.append(response.usage.output_tokens / wall)
    return _line(
        scenario,
        walls,
        tokens_in=response.usage.input_tokens,
        tokens_out=response.usage.output_tokens,
        tokens_out_per_s=round(statistics.median(rates), 1),
    )


async def calculator_turn(runs: int) -> str:
    walls, answers = [], set()
    turn = NeuronTurn.from_plugins(
        model="local:default", tools=["calculator"], provider_options={"progress": False}
    )
    assert isinstance(turn.provider, LocalProvider)
    try:
        await turn.provider.start()
        for _ in range(runs):
            began = time.perf_counter()
            output = await turn.execute(
                TurnInput(message="What is 17*23? Use the calculator.", trigger="user")
            )
            walls.append(time.perf_counter() - began)
            answers.add(output.message.as_text())
    finally:
        await turn.provider.aclose()
    return _line("calculator_turn", walls, answers=sorted(a or "" for a in answers))


async def main(runs: int) -> None:
    print(await start(runs), flush=True)
    count = "Count from 1 to 60, separated by commas."
    print(await answer(runs, "answer", count, 160), flush=True)
    long_text = "Summarise in three words: " + "the quick brown fox jumps over the lazy dog. " * 100
    print(await answer(runs, "prompt", long_text, 8), flush=True)
    print(await calculator_turn(runs), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_RUNS))
