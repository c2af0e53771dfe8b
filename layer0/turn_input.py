"""`TurnInput`: what a caller hands a turn."""

from __future__ import annotations

from ._tagged import Frozen
from .config import TurnConfig
from .content import Content
from .ids import SessionId
from .json_value import Json
from .trigger import TriggerType

__all__ = ["TurnInput"]


class TurnInput(Frozen):
    """Only what is new: history and memory are read by the turn from a StateReader."""

    message: Content
    """The new message."""
    trigger: TriggerType
    """What started this turn."""
    session: SessionId | None = None
    """The conversation to continue, if any."""
    config: TurnConfig | None = None
    """Per-call overrides."""
    metadata: Json = None
    """Caller data passed through (trace ids and the like)."""
