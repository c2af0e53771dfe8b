"""`TurnConfig`: per-call overrides of a turn's defaults.

Two fields are Python extensions of the reference's six: `effect_policy`
and `session_conflict`. They are written only when set, so every config the
reference writes reads and writes back byte for byte; the reference ignores
them on input (unknown keys are ignored), so a config that passes through a
Rust hop loses them, and a turn then falls back to its own defaults, which
grant no more than the turn's own session: losing them never widens what a
turn may do. They live here, not in `TurnInput.metadata`, because metadata
is the caller's trace data, handed to providers and copied into handoff
inputs, while these are the caller's authority over one call.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

from pydantic import SerializerFunctionWrapHandler, model_serializer

from ._scalars import U32
from ._tagged import Frozen
from .duration import DurationMs
from .effect_policy import EffectPolicy
from .money import Cost

__all__ = ["SessionConflict", "TurnConfig"]

SessionConflict: TypeAlias = Literal["append", "fail"]
"""What a turn's history append does when another run changed the session meanwhile:
`append` after it (the default), or `fail` with `HistoryConflict`."""

_EXTENSIONS: Final = ("effect_policy", "session_conflict")


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
    effect_policy: EffectPolicy | None = None
    """Extension: the effects this call may declare, replacing the turn's default policy.
    Authority: set it in the code that dispatches, never from a user's or a model's text."""
    session_conflict: SessionConflict | None = None
    """Extension: `fail` makes the turn's history append fail if the session changed
    while it ran (see `layer0.history`); `append` (default) appends after."""

    @model_serializer(mode="wrap")
    def _omit_unset_extensions(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        fields: dict[str, object] = handler(self)
        for name in _EXTENSIONS:
            if fields.get(name, ...) is None:
                del fields[name]
        return fields
