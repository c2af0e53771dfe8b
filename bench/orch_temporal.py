"""Dispatch latency and throughput: TemporalOrchestrator (dev server) beside LocalOrchestrator.

Run with `python bench/orch_temporal.py [calls]` (needs neuron-orch-temporal[test],
which brings the `temporal` dev server binary). Prints one JSON line per
orchestrator: the latency of `calls` sequential dispatches of a trivial turn
(`layer0.testing.EchoTurn`: no model, no effects), median and p90 in ms, and
the wall time and rate of 100 concurrent dispatches (`dispatch_many`, best of
3 rounds). The dev server, one in-process worker and the client share this
machine's cores; the figures are the engine's overhead, not a model's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from typing import Any, Final

from layer0 import Orchestrator, TurnInput
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_orch_temporal import TemporalOrchestrator, create_worker
from neuron_orch_temporal.testing import start_dev_server

DEFAULT_CALLS: Final = 100
WARMUP: Final = 10
CONCURRENT: Final = 100
ROUNDS: Final = 3
INPUT: Final = TurnInput(message="ping", trigger="user")


def _ms(nanoseconds: float) -> float:
    return round(nanoseconds / 1e6, 3)


async def _latency(orchestrator: Orchestrator, calls: int) -> dict[str, float]:
    for _ in range(WARMUP):
        await orchestrator.dispatch("echo", INPUT)
    samples: list[int] = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        await orchestrator.dispatch("echo", INPUT)
        samples.append(time.perf_counter_ns() - start)
    deciles = statistics.quantiles(samples, n=10)
    return {"median": _ms(statistics.median(samples)), "p90": _ms(deciles[8])}


async def _throughput(orchestrator: Orchestrator) -> dict[str, float]:
    rounds: list[int] = []
    for _ in range(ROUNDS):
        start = time.perf_counter_ns()
        results = await orchestrator.dispatch_many([("echo", INPUT)] * CONCURRENT)
        rounds.append(time.perf_counter_ns() - start)
        failed = [r for r in results if isinstance(r, Exception)]
        if failed:
            raise RuntimeError(f"{len(failed)} of {CONCURRENT} dispatches failed: {failed[0]!r}")
    best = min(rounds)
    return {"seconds": round(best / 1e9, 3), "per_second": round(CONCURRENT / (best / 1e9), 1)}


async def _measure(name: str, orchestrator: Orchestrator, calls: int) -> dict[str, Any]:
    return {
        "bench": "orch_temporal",
        "orchestrator": name,
        "calls": calls,
        "dispatch_ms": await _latency(orchestrator, calls),
        f"concurrent_{CONCURRENT}": await _throughput(orchestrator),
    }


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Start child processes with stdout on /dev/null: the dev server prints a banner."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


async def _run(calls: int) -> None:
    agents = {"echo": EchoTurn()}
    local = LocalOrchestrator(agents, InMemoryStore(), max_concurrency=CONCURRENT)
    print(json.dumps(await _measure("local", local, calls)), flush=True)
    with _quiet_stdout():
        env = await start_dev_server()
    try:
        store = InMemoryStore()
        async with create_worker(env.client, agents=agents, store=store, task_queue="bench"):
            temporal = TemporalOrchestrator(
                env.client, task_queue="bench", max_concurrency=CONCURRENT
            )
            print(json.dumps(await _measure("temporal-dev-server", temporal, calls)), flush=True)
    finally:
        await env.shutdown()
        # temporalio/sdk-python#300: exiting right after shutdown can abort the process.
        await asyncio.sleep(0.5)


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CALLS
    asyncio.run(_run(calls))


if __name__ == "__main__":
    main()
