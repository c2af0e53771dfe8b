"""`ExitReason`: why a turn stopped."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, TypeAlias

from pydantic import Tag

from ._tagged import UNIT, ExternalVariant, external_union

__all__ = ["CustomExit", "ExitKind", "ExitReason", "ObserverHalt"]

ExitKind: TypeAlias = Literal[
    "complete", "max_turns", "budget_exhausted", "circuit_breaker", "timeout", "error"
]
"""The exit reasons that carry no data."""


class ObserverHalt(ExternalVariant):
    """A hook halted the turn: `{"observer_halt": {"reason": "…"}}`."""

    tag: ClassVar[str] = "observer_halt"
    reason: str


class CustomExit(ExternalVariant):
    """An exit reason of the implementation's own: `{"custom": "<name>"}`."""

    tag: ClassVar[str] = "custom"
    newtype: ClassVar[str | None] = "name"
    name: str


ExitReason: TypeAlias = Annotated[
    Annotated[ExitKind, Tag(UNIT)]
    | Annotated[ObserverHalt, Tag("observer_halt")]
    | Annotated[CustomExit, Tag("custom")],
    *external_union(
        ("complete", "max_turns", "budget_exhausted", "circuit_breaker", "timeout", "error"),
        (ObserverHalt, CustomExit),
        name="exit_reason",
    ),
]
"""Why a turn stopped: an `ExitKind` string, an `ObserverHalt` or a `CustomExit`."""
