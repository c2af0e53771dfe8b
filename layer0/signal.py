"""`SignalPayload`: a message sent to a running workflow."""

from __future__ import annotations

from ._tagged import Frozen
from .json_value import Json

__all__ = ["SignalPayload"]


class SignalPayload(Frozen):
    """A typed message for a workflow: what kind it is and its data."""

    signal_type: str
    data: Json
