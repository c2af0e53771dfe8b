"""`PartialTurn`: what a turn that failed part-way did, and the input that continues it."""

from __future__ import annotations

from dataclasses import dataclass

from .turn_input import TurnInput
from .turn_output import TurnOutput

__all__ = ["PartialTurn", "continues_partial_turns", "partial_of"]


@dataclass(frozen=True, slots=True)
class PartialTurn:
    """What a failed turn did before it failed, so that a retry does not do it again.

    A turn whose tools ran before it failed (say, a provider's 429 on its
    third model call) sets one as its `TurnError`'s `partial`. An
    orchestrator that tries again carries out `output` as a turn that ended
    there (its history append and its effects), then runs `continuation`
    instead of the input it was given: the next attempt starts after the
    tools that ran, which do not run twice. An orchestrator that ignores it
    retries the whole turn, as it would without it. Python only: errors are
    not wire types, but both halves are.

    Only a turn that says it reads continuations (`continues_partial_turns`)
    is given one; one that does not gets its input again, after `output`
    is carried out all the same, so the session it reads says which tools ran.
    """

    output: TurnOutput
    """The turn as far as it got, ended there (NeuronTurn: exit `{"custom": "interrupted"}`)."""
    continuation: TurnInput
    """The input that continues the turn once `output` is carried out."""


def continues_partial_turns(turn: object) -> bool:
    """Whether `turn` runs the continuations partial turns hand on.

    A `Turn` says so with the class attribute `continues_partial_turns = True`
    (NeuronTurn does); one that does not would take a continuation, whose
    message is empty, for an empty question.
    """
    return getattr(turn, "continues_partial_turns", False) is True


def partial_of(error: BaseException) -> PartialTurn | None:
    """The partial turn `error` carries, if any.

    A `TurnError`'s `partial`, or that of the `asyncio.CancelledError` a turn
    cancelled after its tools ran raises (NeuronTurn sets it there too: a
    turn stopped by its caller did what its tools did all the same).
    """
    partial = getattr(error, "partial", None)
    return partial if isinstance(partial, PartialTurn) else None
