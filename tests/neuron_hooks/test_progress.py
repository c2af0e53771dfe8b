"""Progress observers: subscribed by `add` or `add_progress_observer`, given every report."""

from __future__ import annotations

import logging

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


class BrokenWatcher:
    async def on_progress(self, event: ToolProgress) -> None:
        raise RuntimeError("watcher down")


async def test_an_observer_that_raises_is_logged_and_the_others_still_get_the_report(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = HookRegistry()
    registry.add_progress_observer(BrokenWatcher(), name="broken")
    after = WatchingHook()
    registry.add_progress_observer(after, name="after")
    with caplog.at_level(logging.ERROR, logger="neuron_hooks"):
        await registry.notify_progress(REPORT)
    assert after.seen == [REPORT]
    (record,) = caplog.records
    assert record.getMessage() == (
        "progress observer 'broken' raised on a report of tool 'fetch'; ignored"
    )
    assert (record.hook_name, record.tool_name) == ("broken", "fetch")  # type: ignore[attr-defined]
