"""Shared timing for the per-call benchmarks: warm up, then time N awaited calls."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

WARMUP_CALLS = 1_000

Call = Callable[[], Awaitable[object]]
Scenario = Callable[[int], Awaitable[dict[str, Any]]]
Measure = Callable[[str, Call, int], Awaitable[dict[str, Any]]]


async def time_calls(call: Call, calls: int, warmup: int = WARMUP_CALLS) -> tuple[int, int]:
    """Await `call()` `warmup` times, then `calls` times; return the latter's wall and CPU ns."""
    for _ in range(warmup):
        await call()
    wall_start, cpu_start = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(calls):
        await call()
    return time.perf_counter_ns() - wall_start, time.process_time_ns() - cpu_start


def per_call_us(nanoseconds: int, calls: int, digits: int = 3) -> float:
    """`nanoseconds` spent on `calls` calls, as microseconds per call."""
    return round(nanoseconds / calls / 1000, digits)


async def measure(
    scenario: str, call: Call, calls: int, warmup: int = WARMUP_CALLS
) -> dict[str, Any]:
    """Await `call()` `calls` times after a warm-up; return wall and CPU µs per call."""
    wall, cpu = await time_calls(call, calls, warmup)
    return {
        "scenario": scenario,
        "us_per_call": per_call_us(wall, calls),
        "cpu_us_per_call": per_call_us(cpu, calls),
        "calls": calls,
    }


def run(scenarios: Sequence[Scenario], default_calls: int) -> None:
    """Run each scenario (calls from argv[1], else `default_calls`); print one JSON line each."""
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else default_calls

    async def all_of_them() -> None:
        for scenario in scenarios:
            print(json.dumps(await scenario(calls)), flush=True)

    asyncio.run(all_of_them())
