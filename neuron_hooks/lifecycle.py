"""Lifecycle events of a turn (budget and compaction), their observers, and their record.

layer0 defines the events (`ContextPressure`, `PreCompactionFlush`,
`CompactionComplete`, `CostIncurred`, `BudgetWarning`, `BudgetAction`) but
its `HookPoint` enum is wire, shared with the Rust reference, so a new point
cannot be added. Observers therefore get lifecycle events through a method
of their own, `on_lifecycle`, next to (or instead of) a hook's `on_event`:
`HookRegistry.add` subscribes a hook that has one, and
`HookRegistry.add_lifecycle_observer` takes an object that only watches them.

A turn also declares each event as a `log` effect (`lifecycle_log`), so any
orchestrator records it with the turn's output in a form the reference
reads; `lifecycle_events` reads them back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Final, Protocol, TypeAlias, runtime_checkable

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from layer0 import (
    BudgetAction,
    BudgetWarning,
    CompactionComplete,
    ContextPressure,
    CostIncurred,
    Effect,
    LogEffect,
    LogLevel,
    PreCompactionFlush,
    ProviderManaged,
)

__all__ = [
    "LIFECYCLE_KEY",
    "LifecycleEvent",
    "LifecycleObserver",
    "lifecycle_events",
    "lifecycle_log",
]

LifecycleEvent: TypeAlias = Annotated[
    CostIncurred
    | BudgetWarning
    | BudgetAction
    | ContextPressure
    | PreCompactionFlush
    | CompactionComplete
    | ProviderManaged,
    Field(discriminator="type"),
]
"""A budget or compaction event (layer0's `BudgetEvent` or `CompactionEvent`)."""

LIFECYCLE_KEY: Final = "lifecycle"
"""The key, in a `log` effect's `data`, that holds the event's JSON."""

# Built on first use, so importing the registry does not build every event's validator.
_EVENT: Final = TypeAdapter[LifecycleEvent](LifecycleEvent, config=ConfigDict(defer_build=True))


@runtime_checkable
class LifecycleObserver(Protocol):
    """Watches a turn's lifecycle events; what it returns is ignored, what it raises is logged."""

    async def on_lifecycle(self, event: LifecycleEvent) -> None:
        """Take note of `event`; the turn waits for it, so a flush can save state first."""
        ...


def lifecycle_log(event: LifecycleEvent) -> LogEffect:
    """Return the `log` effect that records `event` (warn for a budget warning, else info)."""
    level = LogLevel.WARN if isinstance(event, BudgetWarning) else LogLevel.INFO
    return LogEffect(
        level=level,
        message=_describe(event),
        data={LIFECYCLE_KEY: _EVENT.dump_python(event, mode="json")},
    )


def lifecycle_events(effects: Iterable[Effect]) -> list[LifecycleEvent]:
    """Return the lifecycle events recorded in `effects` by `lifecycle_log`, in order."""
    events: list[LifecycleEvent] = []
    for effect in effects:
        if not isinstance(effect, LogEffect) or not isinstance(effect.data, dict):
            continue
        raw = effect.data.get(LIFECYCLE_KEY)
        if raw is None:
            continue
        try:
            events.append(_EVENT.validate_python(raw))
        except ValidationError:
            # A log effect from elsewhere that happens to use the key is not ours.
            continue
    return events


def _describe(event: LifecycleEvent) -> str:
    if isinstance(event, CostIncurred):
        return f"cost incurred: {event.cost.amount} USD (total {event.cumulative.amount} USD)"
    if isinstance(event, BudgetWarning):
        return f"budget warning: {event.spent.amount} of {event.limit.amount} USD spent"
    if isinstance(event, BudgetAction):
        return f"budget action: {event.action}"
    if isinstance(event, ContextPressure):
        return (
            f"context pressure: {event.fill_percent:.0f}% "
            f"({event.tokens_used} of {event.tokens_available} tokens)"
        )
    if isinstance(event, PreCompactionFlush):
        return "pre-compaction flush"
    if isinstance(event, CompactionComplete):
        return f"compaction complete ({event.strategy}): {event.tokens_freed} tokens freed"
    return f"provider-managed compaction: {event.tokens_before} -> {event.tokens_after} tokens"
