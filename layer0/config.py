"""`TurnConfig`: per-call overrides of a turn's defaults."""

from __future__ import annotations

from ._scalars import U32
from ._tagged import Frozen
from .duration import DurationMs
from .money import Cost

__all__ = ["TurnConfig"]


class TurnConfig(Frozen):
    """Per-call overrides; every field `None` means "the implementation's default"."""

    max_turns: U32 | None = None
    """Most model calls this turn may make."""
    max_cost: Cost | None = None
    """Most USD this turn may spend."""
    max_duration: DurationMs | None = None
    """Wall-clock limit in milliseconds; also a hard deadline."""
    model: str | None = None
    """Model to use instead of the turn's default."""
    allowed_tools: list[str] | None = None
    """Only these tools may be offered and run; `[]` allows none, `None` all."""
    system_addendum: str | None = None
    """Text appended to the system prompt for this call."""
