"""Throughput of `SqliteStore`; one JSON line per scenario.

Run with `python bench/state_sqlite.py [ops]`. Each scenario runs `ops`
operations on a fresh file in a temporary directory, either one after
another from a single task or spread over 50 concurrent tasks, and reports
operations per second (wall clock). Values are a small chat-message-like
object. Writes use the default `synchronous="full"` (every write is fsynced)
unless the scenario name says `normal`. Every value holds the word "teal",
so each search ranks the whole scope: the worst case for `search`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import JsonValue

from layer0 import SessionScope
from neuron_state_sqlite import SqliteStore

DEFAULT_OPS = 2_000
TASKS = 50
SCOPE = SessionScope(id="bench")


def value_of(number: int) -> JsonValue:
    return {"role": "user", "content": f"message {number}: remember the colour teal", "n": number}


async def run(ops: int, tasks: int, op: Callable[[int], Awaitable[object]]) -> float:
    """Run `op(0..ops-1)` from `tasks` tasks; return operations per second."""

    async def worker(first: int) -> None:
        for number in range(first, ops, tasks):
            await op(number)

    start = time.perf_counter()
    await asyncio.gather(*(worker(first) for first in range(tasks)))
    return ops / (time.perf_counter() - start)


async def scenarios(directory: Path, ops: int) -> list[dict[str, JsonValue]]:
    results: list[dict[str, JsonValue]] = []

    def report(scenario: str, ops_per_s: float, tasks: int) -> None:
        results.append(
            {"scenario": scenario, "ops": ops, "tasks": tasks, "ops_per_s": round(ops_per_s)}
        )

    for synchronous in ("full", "normal"):
        suffix = "" if synchronous == "full" else "_sync_normal"
        for tasks, label in ((1, "single"), (TASKS, f"concurrent{TASKS}")):
            path = directory / f"{synchronous}-{label}.db"
            async with SqliteStore(path, synchronous=synchronous) as store:

                async def write(number: int, store: SqliteStore = store) -> None:
                    await store.write(SCOPE, f"k{number}", value_of(number))

                async def read(number: int, store: SqliteStore = store) -> None:
                    await store.read(SCOPE, f"k{number}")

                async def search(number: int, store: SqliteStore = store) -> None:
                    await store.search(SCOPE, f"teal {number}", 10)

                report(f"sqlite_write_{label}{suffix}", await run(ops, tasks, write), tasks)
                if synchronous == "full":
                    report(f"sqlite_read_{label}", await run(ops, tasks, read), tasks)
                    report(f"sqlite_search_{label}", await run(ops, tasks, search), tasks)
    return results


def main() -> None:
    ops = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OPS
    with tempfile.TemporaryDirectory(prefix="bench-state-sqlite-") as directory:
        for result in asyncio.run(scenarios(Path(directory), ops)):
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
