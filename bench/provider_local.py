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

import statistics
import time
from typing import Any

from _timing import Scenario, run

from layer0 import TurnInput
from neuron_provider_local import LocalProvider
from neuron_turn import NeuronTurn, ProviderMessage, ProviderRequest, TextPart

DEFAULT_RUNS = 3


def _record(scenario: str, walls: list[float], **extra: Any) -> dict[str, Any]:
    return {
        "scenario": scenario,
        "median_s": round(statistics.median(walls), 3),
        "max_s": round(max(walls), 3),
        "runs": len(walls),
        **extra,
    }


def _request(text: str, max_tokens: int) -> ProviderRequest:
    message = ProviderMessage("user", [TextPart(text)])
    return ProviderRequest(
        model="default",
        messages=[message],
        max_tokens=max_tokens,
        extra={"cache_prompt": False},
    )


async def start(runs: int) -> dict[str, Any]:
    walls = []
    for _ in range(runs):
        provider = LocalProvider("default", progress=False)
        began = time.perf_counter()
        await provider.start()
        walls.append(time.perf_counter() - began)
        await provider.aclose()
    return _record("start", walls)


async def _answer(runs: int, scenario: str, text: str, max_tokens: int) -> dict[str, Any]:
    walls, rates = [], []
    async with LocalProvider("default", progress=False) as provider:
        await provider.start()
        for _ in range(runs):
            began = time.perf_counter()
            response = await provider.complete(_request(text, max_tokens))
            wall = time.perf_counter() - began
            walls.append(wall)
            rates.append(response.usage.output_tokens / wall)
    return _record(
        scenario,
        walls,
        tokens_in=response.usage.input_tokens,
        tokens_out=response.usage.output_tokens,
        tokens_out_per_s=round(statistics.median(rates), 1),
    )


async def answer(runs: int) -> dict[str, Any]:
    return await _answer(runs, "answer", "Count from 1 to 60, separated by commas.", 160)


async def prompt(runs: int) -> dict[str, Any]:
    text = "Summarise in three words: " + "the quick brown fox jumps over the lazy dog. " * 100
    return await _answer(runs, "prompt", text, 8)


async def calculator_turn(runs: int) -> dict[str, Any]:
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
    return _record("calculator_turn", walls, answers=sorted(a or "" for a in answers))


SCENARIOS: list[Scenario] = [start, answer, prompt, calculator_turn]


if __name__ == "__main__":
    run(SCENARIOS, DEFAULT_RUNS)
