"""Store time of recording a turn in a long session; one JSON line per scenario.

Run with `python bench/history.py [turns]` (default 1,000). One session on a
fresh SQLite file grows by one exchange per turn (user message, assistant
tool call, tool result, answer: 4 messages of ~200 bytes) through
`SqliteStore.apply([HistoryAppend])`, the operation both orchestrators use.
Printed: the store time of recording turn 1 and turn N, each also as the
median of the first and last 20 turns (one fsync'd transaction is noisy on
a shared machine), and their ratio. The `rewrite` scenario does the same
with the old form (the whole history written each turn) for comparison.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pydantic import JsonValue

from layer0 import HISTORY_KEY, HistoryAppend, SessionScope, WriteMemoryEffect
from neuron_state_sqlite import SqliteStore

DEFAULT_TURNS = 1_000
WINDOW = 20
SCOPE = SessionScope(id="bench")


def exchange(turn: int) -> list[JsonValue]:
    text = f"turn {turn}: " + "please remember the colour teal and the number 42. " * 3
    call = {"type": "tool_use", "id": f"c{turn}", "name": "calculator", "input": {"x": turn}}
    result = {"type": "tool_result", "tool_use_id": f"c{turn}", "content": "42", "is_error": False}
    return [
        {"role": "user", "content": text},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": text},
    ]


async def appending(store: SqliteStore, turns: int) -> list[float]:
    times = []
    for turn in range(1, turns + 1):
        append = HistoryAppend(session="bench", turn_id=f"t{turn}", messages=exchange(turn))
        start = time.perf_counter()
        await store.apply([append])
        times.append(time.perf_counter() - start)
    return times


async def rewriting(store: SqliteStore, turns: int) -> list[float]:
    times, history = [], []
    for turn in range(1, turns + 1):
        history.extend(exchange(turn))
        write = WriteMemoryEffect(scope=SCOPE, key=HISTORY_KEY, value=list(history))
        start = time.perf_counter()
        await store.apply([write])
        times.append(time.perf_counter() - start)
    return times


def figures(scenario: str, times: list[float]) -> dict[str, JsonValue]:
    first, last = times[:WINDOW], times[-WINDOW:]
    first_ms, last_ms = statistics.median(first) * 1000, statistics.median(last) * 1000
    return {
        "scenario": scenario,
        "turns": len(times),
        "turn_1_ms": round(times[0] * 1000, 3),
        f"turn_{len(times)}_ms": round(times[-1] * 1000, 3),
        f"median_first_{WINDOW}_ms": round(first_ms, 3),
        f"median_last_{WINDOW}_ms": round(last_ms, 3),
        "last_over_first": round(last_ms / first_ms, 2),
    }


async def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        for scenario, record in (("append", appending), ("rewrite", rewriting)):
            async with SqliteStore(Path(directory) / f"{scenario}.db") as store:
                times = await record(store, turns)
                history = await store.read(SCOPE, HISTORY_KEY)
            assert isinstance(history, list) and len(history) == 4 * turns
            print(json.dumps(figures(scenario, times)), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_TURNS))
