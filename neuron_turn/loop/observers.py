"""Turn observers: code that watches every turn the process runs, as it runs (tracing).

Why: hooks see the points of one turn's pipeline and may steer it; an
instrumentation (OpenTelemetry spans, metrics) must see every turn the
process runs, from its start to its output or error, without steering it and
without the turn being built for it. `add_turn_observer` registers one for
the whole process, as OpenTelemetry instrumentations do; at the start of each
turn the loop asks every observer for a `TurnWatch`, which then gets the
turn's events (the ones `NeuronTurn.stream` yields: model calls with their
request and response, tool calls, effects, halts and limits) and its end.

A turn checks one tuple when it starts; with no observer registered nothing
else happens, so observing costs nothing until something listens. A watch
that raises is logged and dropped for the rest of that turn: observing never
changes what a turn does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from layer0 import TurnInput, TurnOutput

from .events import TurnEvent
from .provider import Provider

__all__ = [
    "TurnObserver",
    "TurnStart",
    "TurnWatch",
    "add_turn_observer",
    "remove_turn_observer",
    "turn_observers",
]

logger: Final = logging.getLogger("neuron_turn.observers")

_observers: tuple[TurnObserver, ...] = ()


@dataclass(frozen=True, slots=True)
class TurnStart:
    """What an observer learns when a turn starts."""

    agent: str
    """The turn's agent name (`NeuronTurnConfig.agent`)."""
    model: str
    """The model the turn asks for (after the call's overrides)."""
    provider: Provider
    """The provider the turn calls."""
    input: TurnInput
    """The turn's input, as the caller sent it."""


@runtime_checkable
class TurnWatch(Protocol):
    """Watches one turn: its events as they happen, then its end."""

    def on_event(self, event: TurnEvent) -> None:
        """Take note of `event`; called in the task that does the work the event reports."""
        ...

    def on_end(self, output: TurnOutput | None, error: BaseException | None) -> None:
        """The turn ended, with `output` or with `error` (cancellation included)."""
        ...


@runtime_checkable
class TurnObserver(Protocol):
    """Watches every turn: returns a `TurnWatch` for a turn, or None to skip it."""

    def watch(self, turn: TurnStart) -> TurnWatch | None:
        """Start watching `turn`; called in the task running it, before anything else."""
        ...


def add_turn_observer(observer: TurnObserver) -> None:
    """Watch every turn that starts from now on with `observer` (no-op if already added)."""
    global _observers
    if observer not in _observers:
        _observers = (*_observers, observer)


def remove_turn_observer(observer: TurnObserver) -> None:
    """Stop watching turns that start from now on with `observer` (no-op if absent)."""
    global _observers
    _observers = tuple(o for o in _observers if o is not observer)


def turn_observers() -> tuple[TurnObserver, ...]:
    """The observers registered, in registration order."""
    return _observers


def start_watches(turn: Callable[[], TurnStart]) -> _Watches | None:
    """Ask every observer for a watch of the turn `turn()` describes; None if none watches.

    `turn` is called only when an observer is registered, so an unobserved
    turn builds nothing.
    """
    observers = _observers
    if not observers:
        return None
    start = turn()
    watches: list[TurnWatch] = []
    for observer in observers:
        try:
            watch = observer.watch(start)
        except Exception:
            logger.exception("turn observer %r raised when a turn started; ignored", observer)
            continue
        if watch is not None:
            watches.append(watch)
    return _Watches(watches) if watches else None


class _Watches:
    """The watches of one turn, as one event sink; a watch that raises is dropped."""

    def __init__(self, watches: Sequence[TurnWatch]) -> None:
        self._watches = list(watches)

    def __call__(self, event: TurnEvent) -> None:
        for watch in tuple(self._watches):
            try:
                watch.on_event(event)
            except Exception:
                self._drop(watch, event.kind)

    def end(self, output: TurnOutput | None, error: BaseException | None) -> None:
        """Tell every watch the turn ended."""
        for watch in tuple(self._watches):
            try:
                watch.on_end(output, error)
            except Exception:
                self._drop(watch, "end")

    def _drop(self, watch: TurnWatch, at: str) -> None:
        logger.exception("turn watch %r raised on %s; dropped for this turn", watch, at)
        self._watches.remove(watch)
