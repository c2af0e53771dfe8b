"""Progress observers: subscribed by `add` or `add_progress_observer`, given every report."""

from __future__ import annotations

import pytest

from layer0 import Continue, HookAction, HookContext, HookPoint
from neuron_hooks import DuplicateHookError, HookRegistry, InvalidHookError, ToolProgress

REPORT = ToolProgress("c1", "fetch", "page 2 of 4", 0.5, {"page": 2})


class WatchingHook:
    """A hook that also watches progress."""

    points = [HookPoint.PRE_INFERENCE]

    def __init__(self) -> None:
        self.seen: list[ToolProgress] = []

    async def on_event(self, ctx: HookContext) -> HookAction:
        return Continue()

    async def on_progress(self, event: ToolProgress) -> None:
        self.seen.append(event)


class SyncWatcher:
    def on_progress(self, event: ToolProgress) -> None:
        raise AssertionError("never called")


async def test_a_hook_with_on_progress_is_subscribed_when_added() -> None:
    registry = HookRegistry()
    assert not registry.has_progress_observers()
    hook = WatchingHook()
    registry.add(hook)
    assert registry.has_progress_observers()
    await registry.notify_progress(REPORT)
    assert hook.seen == [REPORT]


def test_a_progress_observer_needs_an_async_on_progress_and_a_free_name() -> None:
    registry = HookRegistry()
    with pytest.raises(InvalidHookError, match="lacks an `async def on_progress"):
        registry.add_progress_observer(SyncWatcher())  # type: ignore[arg-type]
    registry.add(WatchingHook(), name="w")
    with pytest.raises(DuplicateHookError):
        registry.add_progress_observer(WatchingHook(), name="w")
