"""Errors of neuron-orch-local beyond the layer0 ones.

layer0.OrchError
├── UnknownQueryError          `query` was asked a query type it does not answer
└── layer0.DispatchFailed
    └── MemoryNotAppliedError  a turn's memory effects, its history with them, were not
                               written: they are on the error, none lost
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from layer0 import (
    DeleteMemoryEffect,
    DispatchFailed,
    HistoryAppend,
    OrchError,
    TurnOutput,
    WriteMemoryEffect,
)

__all__ = ["MemoryNotAppliedError", "UnknownQueryError"]


class UnknownQueryError(OrchError, ValueError):
    """`query` was asked a query type it does not answer; the message lists those it does."""

    def __init__(self, query_type: str, supported: Iterable[str]) -> None:
        self.query_type = query_type
        self.supported = tuple(sorted(supported))
        super().__init__(
            f"unknown query type {query_type!r}; supported: {', '.join(self.supported)}"
        )


class MemoryNotAppliedError(DispatchFailed):
    """A turn's memory effects (its history append among them) were not written; none was.

    Why: the turn ran (its tools too) and the store refused what it declared (a
    disk full, a connection lost): `effects` holds them all, the conversation's
    new messages in its `HistoryAppend`, so the caller can keep them or write
    them once the store takes writes again (`LocalOrchestrator.apply_memory`),
    rather than run the turn again. `output` is the turn's answer.
    """

    def __init__(
        self,
        message: str,
        # `_memory.MemoryEffect`, spelled out: that module imports this one.
        effects: Sequence[WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend],
        *,
        attempts: int = 1,
        output: TurnOutput | None = None,
    ) -> None:
        super().__init__(message)
        self.effects = tuple(effects)
        """The effects not written, in the order they were to be applied."""
        self.attempts = attempts
        """How many times the store was asked to apply them."""
        self.output = output
        """The output of the turn that declared them (None where it was not known)."""
