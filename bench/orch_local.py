"""Overhead of `LocalOrchestrator.dispatch` over a bare `Turn.execute`; prints one JSON line.

Run with `python bench/orch_local.py [calls]`. The turn is `layer0.testing.EchoTurn`,
which never suspends and declares no effects, so the figures are the cost of
the orchestrator's own code: the workflow record, the chain, the (empty)
effect pass. Each figure is microseconds per call, as wall clock
(`perf_counter_ns`) and process CPU (`process_time_ns`). `dispatch_many`
runs batches of 100 tasks with the default `max_concurrency` of 8.
"""

from __future__ import annotations

from typing import Any

from _timing import Call, per_call_us, run, time_calls

from layer0 import TurnInput
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import LocalOrchestrator

DEFAULT_CALLS = 5_000
WARMUP_CALLS = 500
BATCH = 100
INPUT = TurnInput(message="ping", trigger="user")
SESSION_INPUT = TurnInput(message="ping", trigger="user", session="bench")


async def _measure(call: Call, calls: int) -> dict[str, float]:
    wall, cpu = await time_calls(call, calls, WARMUP_CALLS)
    return {"wall": per_call_us(wall, calls), "cpu": per_call_us(cpu, calls)}


def _minus(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {key: round(a[key] - b[key], 3) for key in a}


async def _run(calls: int) -> dict[str, Any]:
    turn = EchoTurn()
    orchestrator = LocalOrchestrator({"echo": turn}, InMemoryStore())
    execute = await _measure(lambda: turn.execute(INPUT), calls)
    dispatch = await _measure(lambda: orchestrator.dispatch("echo", INPUT), calls)
    session = await _measure(lambda: orchestrator.dispatch("echo", SESSION_INPUT), calls)
    tasks = [("echo", INPUT)] * BATCH
    batches = max(1, calls // BATCH)
    many = await _measure(lambda: orchestrator.dispatch_many(tasks), batches)
    return {
        "bench": "orch_local",
        "calls": calls,
        "execute_us": execute,
        "dispatch_us": dispatch,
        "dispatch_overhead_us": _minus(dispatch, execute),
        "dispatch_session_us": session,
        "dispatch_many": {
            "tasks": BATCH,
            "batches": batches,
            "per_batch_us": many,
            "per_task_us": {key: round(value / BATCH, 3) for key, value in many.items()},
        },
    }


if __name__ == "__main__":
    run([_run], DEFAULT_CALLS)
