"""Lifecycle events: observers on the registry, and their record as `log` effects."""

from __future__ import annotations

import logging
from collections.abc import Set

import pytest

from layer0 import (
    BudgetWarning,
    CompactionComplete,
    Continue,
    CostIncurred,
    HookAction,
    HookContext,
    HookPoint,
    LogEffect,
    LogLevel,
    usd,
)
from neuron_hooks import (
    DuplicateHookError,
    HookRegistry,
    InvalidHookError,
    LifecycleEvent,
    lifecycle_events,
    lifecycle_log,
)

COST = CostIncurred(agent="a", cost=usd("0.01"), cumulative=usd("0.02"))


class Watcher:
    def __init__(self) -> None:
        self.seen: list[LifecycleEvent] = []

    async def on_lifecycle(self, event: LifecycleEvent) -> None:
        self.seen.append(event)


class HookAndWatcher(Watcher):
    @property
    def points(self) -> Set[HookPoint]:
        return frozenset({HookPoint.EXIT_CHECK})

    async def on_event(self, ctx: HookContext) -> HookAction:
        return Continue()


class Broken:
    async def on_lifecycle(self, event: LifecycleEvent) -> None:
        raise RuntimeError("observer bug")


async def test_observers_get_events_in_registration_order() -> None:
    order: list[str] = []

    class Named:
        def __init__(self, name: str) -> None:
            self.name = name

        async def on_lifecycle(self, event: LifecycleEvent) -> None:
            order.append(self.name)

    registry = HookRegistry()
    assert not registry.has_lifecycle_observers()
    registry.add_lifecycle_observer(Named("first"))
    registry.add_lifecycle_observer(Named("second"))
    await registry.notify(COST)
    assert order == ["first", "second"]


async def test_a_hook_with_on_lifecycle_gets_lifecycle_events_too() -> None:
    registry = HookRegistry()
    both = HookAndWatcher()
    registry.add(both)
    assert registry.has_lifecycle_observers()
    await registry.notify(COST)
    assert both.seen == [COST]


async def test_a_raising_observer_is_logged_by_name_and_the_rest_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = HookRegistry()
    watcher = Watcher()
    registry.add_lifecycle_observer(Broken(), name="broken")
    registry.add_lifecycle_observer(watcher)
    with caplog.at_level(logging.ERROR, logger="neuron_hooks"):
        await registry.notify(COST)
    assert watcher.seen == [COST]
    assert "lifecycle observer 'broken' raised on cost_incurred" in caplog.text


def test_names_are_unique_across_hooks_and_observers() -> None:
    registry = HookRegistry()
    registry.add(HookAndWatcher(), name="x")
    with pytest.raises(DuplicateHookError):
        registry.add_lifecycle_observer(Watcher(), name="x")


def test_an_object_without_async_on_lifecycle_is_refused() -> None:
    class Sync:
        def on_lifecycle(self, event: LifecycleEvent) -> None:
            pass

    with pytest.raises(InvalidHookError, match="on_lifecycle"):
        HookRegistry().add_lifecycle_observer(Sync())  # type: ignore[arg-type]


def test_events_round_trip_through_log_effects_and_other_logs_are_ignored() -> None:
    warning = BudgetWarning(workflow="w", spent=usd("0.8"), limit=usd("1"))
    complete = CompactionComplete(agent="a", strategy="tiered", tokens_freed=1200)
    effects = [
        lifecycle_log(COST),
        LogEffect(level=LogLevel.INFO, message="other", data={"lifecycle": {"type": "nope"}}),
        LogEffect(level=LogLevel.INFO, message="plain", data=None),
        lifecycle_log(warning),
        lifecycle_log(complete),
    ]
    assert lifecycle_events(effects) == [COST, warning, complete]
    assert effects[3].level == LogLevel.WARN
    assert effects[0].level == LogLevel.INFO
    assert "1200 tokens freed" in effects[4].message
