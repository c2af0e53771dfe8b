"""Per-call overhead of `HookRegistry.dispatch`; one JSON line per scenario.

Run with `python bench/hooks.py [calls]`. Each scenario awaits the same call
`calls` times inside one event loop and reports wall-clock and process CPU
microseconds per call. The hooks never suspend, so the figures are the cost of
the pipeline's Python code, not of event-loop scheduling. `await_noop` is the
floor: awaiting one trivial coroutine, i.e. the cost of the call itself.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable, Set
from typing import Any

from layer0 import HookAction, HookContext, HookPoint, usd
from neuron_hooks import CONTINUE, BudgetHook, HookRegistry, RedactionHook, ToolPolicyHook

DEFAULT_CALLS = 50_000
WARMUP_CALLS = 2_000
POINT = HookPoint.PRE_TOOL_USE
CTX = HookContext(
    point=POINT,
    tool_name="read_file",
    tool_input={"path": "/tmp/notes.txt", "options": {"encoding": "utf-8", "lines": [1, 20]}},
    tokens_used=1_234,
    cost=usd("0.0123"),
    turns_completed=2,
    elapsed=150,
)


class TrivialHook:
    """The cheapest possible hook: listens at the benchmarked point and continues."""

    @property
    def points(self) -> Set[HookPoint]:
        return frozenset({POINT})

    async def on_event(self, ctx: HookContext) -> HookAction:
        return CONTINUE


async def noop(ctx: HookContext) -> HookAction:
    return CONTINUE


async def _measure(
    scenario: str, call: Callable[[HookContext], Awaitable[object]], calls: int
) -> dict[str, Any]:
    for _ in range(WARMUP_CALLS):
        await call(CTX)
    wall_start, cpu_start = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(calls):
        await call(CTX)
    wall, cpu = time.perf_counter_ns() - wall_start, time.process_time_ns() - cpu_start
    return {
        "scenario": scenario,
        "us_per_call": round(wall / calls / 1000, 3),
        "cpu_us_per_call": round(cpu / calls / 1000, 3),
        "calls": calls,
    }


def _registry(hooks: int) -> HookRegistry:
    registry = HookRegistry()
    for index in range(hooks):
        registry.add(TrivialHook(), name=f"trivial-{index}")
    return registry


async def await_noop(calls: int) -> dict[str, Any]:
    """Baseline: await one trivial coroutine, no registry."""
    return await _measure("await_noop", noop, calls)


async def hook_dispatch_0(calls: int) -> dict[str, Any]:
    """`dispatch` with no hook at the point: the shared-`Continue` fast path."""
    return await _measure("hook_dispatch_0", _registry(0).dispatch, calls)


async def hook_dispatch_1(calls: int) -> dict[str, Any]:
    """`dispatch` with one trivial hook at the point."""
    return await _measure("hook_dispatch_1", _registry(1).dispatch, calls)


async def hook_dispatch_5(calls: int) -> dict[str, Any]:
    """`dispatch` with five trivial hooks at the point."""
    return await _measure("hook_dispatch_5", _registry(5).dispatch, calls)


async def hook_dispatch_stock(calls: int) -> dict[str, Any]:
    """`dispatch` at `pre_tool_use` with the stock guards: budget, tool policy, redaction."""
    registry = HookRegistry()
    registry.add(BudgetHook(max_cost="1.00", max_tokens=100_000))
    registry.add(ToolPolicyHook(allow=["read_*", "search"], deny=["shell_*"]))
    registry.add(RedactionHook())
    return await _measure("hook_dispatch_stock", registry.dispatch, calls)


SCENARIOS: list[Callable[[int], Awaitable[dict[str, Any]]]] = [
    await_noop,
    hook_dispatch_0,
    hook_dispatch_1,
    hook_dispatch_5,
    hook_dispatch_stock,
]


async def _run(calls: int) -> None:
    for scenario in SCENARIOS:
        print(json.dumps(await scenario(calls)), flush=True)


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CALLS
    asyncio.run(_run(calls))


if __name__ == "__main__":
    main()
