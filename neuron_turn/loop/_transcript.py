"""Where a run leaves the conversation it went on from and the messages it added.

`run` hands one to the turn and reads it into its `RunResult` (`all_messages`):
the messages never travel in the `TurnOutput`, whose wire form is layer0's. A run
that fails leaves what it had used, so a caller charged for it (`charge_to`) is
charged even when no partial turn is kept (a run without a session).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from neuron_tool import RunUsage

from .provider import ProviderMessage

__all__ = ["Transcript"]


@dataclass(slots=True)
class Transcript:
    """The history a run read or was given, the messages it added, what a failed one used."""

    history: Sequence[ProviderMessage] = ()
    new: Sequence[ProviderMessage] = ()
    failed_usage: RunUsage | None = None
    """What the run had used when it raised or was cancelled (None: it did not)."""
