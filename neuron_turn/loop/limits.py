"""Turn limits: max turns, max cost and max duration, checked in that order."""

from __future__ import annotations

from moneyed import Money

from layer0 import ExitReason

__all__ = ["limit_reached"]


def limit_reached(
    *,
    turns_used: int,
    max_turns: int,
    cost: Money,
    max_cost: Money | None,
    elapsed_ms: int,
    max_duration: int | None,
) -> ExitReason | None:
    """Return the exit reason of the first limit reached, or None while all hold."""
    if turns_used >= max_turns:
        return "max_turns"
    if max_cost is not None and cost >= max_cost:
        return "budget_exhausted"
    if max_duration is not None and elapsed_ms >= max_duration:
        return "timeout"
    return None
