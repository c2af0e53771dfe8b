"""A hook's own CancelledError is a failing hook; the turn's cancellation still cancels."""

from __future__ import annotations

import asyncio
import logging

import pytest

from layer0 import Continue, CostIncurred, HookAction, HookContext, HookPoint, SkipTool, usd
from neuron_hooks import HookRegistry, LifecycleEvent, hook


def pre_tool_use() -> HookContext:
    return HookContext(
        point=HookPoint.PRE_TOOL_USE,
        tool_name="rm",
        tool_input={},
        tokens_used=0,
        cost=usd("0"),
        turns_completed=0,
        elapsed=0,
    )


async def cancelled_elsewhere() -> None:
    future = asyncio.get_running_loop().create_future()
    future.cancel()
    await future


async def test_a_hook_raising_its_own_cancelled_error_counts_as_continue_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Passed on, it ended the turn as if its caller had cancelled it, naming no hook.
    @hook(points=[HookPoint.PRE_TOOL_USE])
    async def policy_call(ctx: HookContext) -> HookAction:
        await cancelled_elsewhere()
        return Continue()

    @hook(points=[HookPoint.PRE_TOOL_USE])
    async def deny(ctx: HookContext) -> HookAction:
        return SkipTool(reason="no")

    registry = HookRegistry()
    registry.add(policy_call)
    registry.add(deny)

    with caplog.at_level(logging.ERROR, logger="neuron_hooks"):
        action = await registry.dispatch(pre_tool_use())

    assert action == SkipTool(reason="no")
    assert "hook 'policy_call' raised at pre_tool_use" in caplog.text


async def test_cancelling_the_dispatch_still_cancels_it() -> None:
    started, never = asyncio.Event(), asyncio.Event()

    @hook(points=[HookPoint.PRE_TOOL_USE])
    async def slow(ctx: HookContext) -> HookAction:
        started.set()
        await never.wait()
        return Continue()

    registry = HookRegistry()
    registry.add(slow)
    task = asyncio.create_task(registry.dispatch(pre_tool_use()))
    await started.wait()
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def test_a_lifecycle_observer_raising_its_own_cancelled_error_is_logged() -> None:
    class Watch:
        async def on_lifecycle(self, event: LifecycleEvent) -> None:
            await cancelled_elsewhere()

    registry = HookRegistry()
    registry.add_lifecycle_observer(Watch())
    event = CostIncurred(agent="a", cost=usd("0.01"), cumulative=usd("0.01"))

    await registry.notify(event)  # returns: the observer's failure is its own
