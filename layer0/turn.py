"""`Turn`: the one method every agent implementation offers."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .turn_input import TurnInput
from .turn_output import TurnOutput

__all__ = ["Turn"]


@runtime_checkable
class Turn(Protocol):
    """Runs one turn: reads state through a StateReader, declares effects, never writes.

    Raises `TurnError` subclasses on failure.
    """

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Run one turn on `input`."""
        ...
