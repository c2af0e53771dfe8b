"""`TurnOutput`: what a turn hands back."""

from __future__ import annotations

from pydantic import Field

from ._tagged import Frozen
from .content import Content
from .effect import Effect
from .exit_reason import ExitReason
from .metadata import TurnMetadata

__all__ = ["TurnOutput"]


class TurnOutput(Frozen):
    """The answer, why the turn stopped, what it used and the effects it declared."""

    message: Content
    """The last model content."""
    exit_reason: ExitReason
    metadata: TurnMetadata
    effects: list[Effect] = Field(default_factory=list)
    """Declared effects, in declaration order."""
