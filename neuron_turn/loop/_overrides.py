"""Which turns run as another inside a `NeuronTurn.override` block, in this context.

A context variable, so an override holds for the task that entered it and the
tasks it starts (an orchestrator's dispatch, a web handler under test), never
for a test running beside it on the same event loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

__all__ = ["overridden", "overriding"]

_OVERRIDES: Final[ContextVar[tuple[tuple[object, object], ...]]] = ContextVar(
    "neuron_turn_overrides", default=()
)
"""(turn, the turn it runs as) pairs; the latest first, so an inner block wins."""


@contextmanager
def overriding(turn: object, replacement: object) -> Iterator[None]:
    """Make `turn` run as `replacement` until the block ends."""
    token = _OVERRIDES.set(((turn, replacement), *_OVERRIDES.get()))
    try:
        yield
    finally:
        _OVERRIDES.reset(token)


def overridden(turn: object) -> object | None:
    """The turn `turn` runs as here (None: itself); by identity, never equality."""
    for overridden_turn, replacement in _OVERRIDES.get():
        if overridden_turn is turn:
            return replacement
    return None
