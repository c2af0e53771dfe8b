"""`TurnMetadata` and `ToolCallRecord`: what a turn used."""

from __future__ import annotations

from ._scalars import U32, U64, StrictBool
from ._tagged import Frozen
from .duration import DurationMs
from .money import Cost, usd

__all__ = ["ToolCallRecord", "TurnMetadata"]


class ToolCallRecord(Frozen):
    """One tool call: which tool, how long it took, whether it succeeded."""

    name: str
    duration: DurationMs
    success: StrictBool


class TurnMetadata(Frozen):
    """Tokens, cost, turns, tool calls and wall-clock time of one turn (zero when unknown).

    Every field is required on the wire, as in the reference; `zero()` builds
    the empty record.
    """

    tokens_in: U64
    tokens_out: U64
    cost: Cost
    turns_used: U32
    tools_called: list[ToolCallRecord]
    duration: DurationMs

    @classmethod
    def zero(cls) -> TurnMetadata:
        """Return metadata with every count zero and no tool calls."""
        return cls(tokens_in=0, tokens_out=0, cost=usd(), turns_used=0, tools_called=[], duration=0)
