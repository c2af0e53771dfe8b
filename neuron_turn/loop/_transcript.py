"""Where a run leaves the conversation it went on from and the messages it added.

`run` hands one to the turn and reads it into its `RunResult` (`all_messages`):
the messages never travel in the `TurnOutput`, whose wire form is layer0's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .provider import ProviderMessage

__all__ = ["Transcript"]


@dataclass(slots=True)
class Transcript:
    """The history a run read or was given, and the messages the run added to it."""

    history: Sequence[ProviderMessage] = ()
    new: Sequence[ProviderMessage] = ()
