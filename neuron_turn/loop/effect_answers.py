"""Effect answers: the orchestrator carries out an effect while the turn waits, and answers.

An effect tool only declares its effect; by default the model gets a short
confirmation ("Delegation requested.") and the orchestrator acts after the
turn. An orchestrator that can act at once (neuron-orch-local's, for a
delegation: it runs the other agent and waits for it) sets an
`EffectAnswerer` around `turn.execute` with `answering(...)`. The loop
then hands it each effect an effect tool declares, after the hooks and the
grant checks; when it returns an `EffectAnswer`, the model sees the
answer's text as the tool's result, the answer's tokens and cost are added
to the turn's (so the turn's limits count them too), and its `effects` are
declared instead of the one it carried out, when the round of tool calls
ends, in the model's order of the calls (answers to concurrent calls may come
back in any order). It returns None for effects it leaves to the usual path.

The answerer lives in a context variable, so `layer0.Turn.execute` keeps its
one argument and a turn that is not a `NeuronTurn` is unaffected.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final

from moneyed import Money

from layer0 import Effect, usd

from ._context_value import set_within

__all__ = ["EffectAnswer", "EffectAnswerer", "answering", "current_answerer"]


@dataclass(frozen=True, slots=True)
class EffectAnswer:
    """What the model is told about an effect the orchestrator carried out, and what it cost."""

    text: str
    """The tool result the model sees."""
    is_error: bool = False
    """Whether the result is an error (the effect could not be carried out)."""
    effects: Sequence[Effect] = ()
    """Declared in place of the effect carried out (a record of it, say); may be empty."""
    tokens_in: int = 0
    tokens_out: int = 0
    cost: Money = field(default_factory=usd)
    """Rolled up into the turn's totals, and counted against its `max_cost`."""


EffectAnswerer = Callable[[Effect], Awaitable[EffectAnswer | None]]
"""Carries out an effect and answers it, or returns None to leave it declared as usual."""

_ANSWERER: Final[ContextVar[EffectAnswerer | None]] = ContextVar(
    "neuron_turn_effect_answerer", default=None
)


def answering(answerer: EffectAnswerer) -> AbstractContextManager[None]:
    """Let `answerer` answer the effects of the turns executed inside this block."""
    return set_within(_ANSWERER, answerer)


def current_answerer() -> EffectAnswerer | None:
    """Return the answerer set by the innermost `answering` block, if any."""
    return _ANSWERER.get()
