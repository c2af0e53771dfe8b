"""Per-call overhead of `HookRegistry.dispatch`; one JSON line per scenario.

Run with `python bench/hooks.py [calls]`. Each scenario awaits the same call
`calls` times inside one event loop and reports wall-clock and process CPU
microseconds per call. The hooks never suspend, so the figures are the cost of
the pipeline's Python code, not of event-loop scheduling. `await_noop` is the
floor: awaiting one trivial coroutine, i.e. the cost of the call itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Set
from typing import Any

from _timing import measure, run

from layer0 import HookAction, HookContext, HookPoint, usd
from neuron_hooks import CONTINUE, BudgetHook, HookRegistry, RedactionHook, ToolPolicyHook

DEFAULT_CALLS = 50_000
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


def _registry(hooks: int) -> HookRegistry:
    registry = HookRegistry()
    for index in range(hooks):
        registry.add(TrivialHook(), name=f"trivial-{index}")
    return registry


async def await_noop(calls: int) -> dict[str, Any]:
    """Baseline: await one trivial coroutine, no registry."""
    return await measure("await_noop", lambda: noop(CTX), calls)


async def hook_dispatch_0(calls: int) -> dict[str, Any]:
    """`dispatch` with no hook at the point: the shared-`Continue` fast path."""
    registry = _registry(0)
    return await measure("hook_dispatch_0", lambda: registry.dispatch(CTX), calls)


async def hook_dispatch_1(calls: int) -> dict[str, Any]:
    """`dispatch` with one trivial hook at the point."""
    registry = _registry(1)
    return await measure("hook_dispatch_1", lambda: registry.dispatch(CTX), calls)


async def hook_dispatch_5(calls: int) -> dict[str, Any]:
    """`dispatch` with five trivial hooks at the point."""
    registry = _registry(5)
    return await measure("hook_dispatch_5", lambda: registry.dispatch(CTX), calls)


async def hook_dispatch_stock(calls: int) -> dict[str, Any]:
    """`dispatch` at `pre_tool_use` with the stock guards: budget, tool policy, redaction."""
    registry = HookRegistry()
    registry.add(BudgetHook(max_cost="1.00", max_tokens=100_000))
    registry.add(ToolPolicyHook(allow=["read_*", "search"], deny=["shell_*"]))
    registry.add(RedactionHook())
    return await measure("hook_dispatch_stock", lambda: registry.dispatch(CTX), calls)


SCENARIOS: list[Callable[[int], Awaitable[dict[str, Any]]]] = [
    await_noop,
    hook_dispatch_0,
    hook_dispatch_1,
    hook_dispatch_5,
    hook_dispatch_stock,
]


def main() -> None:
    """Run every scenario and print one JSON line each."""
    run(SCENARIOS, DEFAULT_CALLS)


if __name__ == "__main__":
    main()
