"""Shared timing for the per-call benchmarks: warm up, then time N awaited calls."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

WARMUP_CALLS = 1_000

Scenario = Callable[[int], Awaitable[dict[str, Any]]]


async def measure(
    scenario: str, call: Callable[[], Awaitable[object]], calls: int
) -> dict[str, Any]:
    """Await `call()` `calls` times after a warm-up; return wall and CPU µs per call."""
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


def run(scenarios: Sequence[Scenario], default_calls: int) -> None:
    """Run each scenario (calls from argv[1], else `default_calls`); print one JSON line each."""
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else default_calls

    async def all_of_them() -> None:
        for scenario in scenarios:
            print(json.dumps(await scenario(calls)), flush=True)

    asyncio.run(all_of_them())
