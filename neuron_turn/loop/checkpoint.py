"""Checkpoints: the turn so far, after each round of tool calls, for a runner that may be lost.

A durable runner (neuron-orch-temporal's worker) may lose a turn with no
error to carry its partial turn: the process is killed, the machine is
gone, the attempt times out. To go on from what the lost attempt's tools
did rather than run them again, it sets a callback around `turn.execute`
with `checkpointing(...)`; after every round of tool calls a `NeuronTurn`
hands it the partial turn that round ends (`layer0.PartialTurn`: its
output, and the continuation that goes on from it), as it would hand it on
an error. The runner keeps the latest where a later attempt finds it
(Temporal's heartbeat details).

The callback lives in a context variable, as `answering`'s answerer does:
`layer0.Turn.execute` keeps its one argument, and a turn that is not a
`NeuronTurn` hands nothing. It runs on the loop's own path, so it must be
quick and must not raise.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import Final

from layer0 import PartialTurn

from ._context_value import set_within

__all__ = ["Checkpoint", "checkpointing", "current_checkpoint"]

Checkpoint = Callable[[PartialTurn], None]
"""Takes the partial turn a round of tool calls ended with; quick, and never raises."""

_CHECKPOINT: Final[ContextVar[Checkpoint | None]] = ContextVar(
    "neuron_turn_checkpoint", default=None
)


def checkpointing(checkpoint: Checkpoint) -> AbstractContextManager[None]:
    """Hand `checkpoint` the partial turn after each tool round of the turns executed inside."""
    return set_within(_CHECKPOINT, checkpoint)


def current_checkpoint() -> Checkpoint | None:
    """Return the callback set by the innermost `checkpointing` block, if any."""
    return _CHECKPOINT.get()
