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

A delegation answered for a turn that has a session and reads its history
(a `state` reader) gets a session of its own (`delegation_session`), so
that an agent pausing for approval there can be resumed: an
answer whose `held` lists the calls the agent waits on pauses the turn too,
on those calls (named `<call id>/<their id>`). The
turn's resume hands their decisions back to the answerer as a delegation
whose input resumes the agent's session (`resume_input`), after checking
them with the answerer's `check_decisions` when it has one
(`ChecksDecisions`), before anything runs.

The answerer lives in a context variable, so `layer0.Turn.execute` keeps its
one argument and a turn that is not a `NeuronTurn` is unaffected.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

from moneyed import Money
from pydantic import JsonValue

from layer0 import DelegateEffect, Effect, SessionId, usd

from ._context_value import set_within
from .approval import PendingCall, ResumedDelegation, resume_input
from .provider import ContentPart, ToolUsePart

__all__ = [
    "ChecksDecisions",
    "EffectAnswer",
    "EffectAnswerer",
    "answered_form",
    "answering",
    "current_answerer",
    "delegation_session",
    "delegation_sessions",
]


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
    held: Sequence[PendingCall] = ()
    """The calls the agent carrying the effect out waits on for approval (with `agent` set).

    Not empty: the effect is not done, so the turn pauses on them; `text` is
    then not shown.
    """


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


@runtime_checkable
class ChecksDecisions(Protocol):
    """An answerer that can check a resumed delegation's decisions without running anything."""

    async def check_decisions(self, effect: DelegateEffect) -> None:
        """Check the decisions `effect`'s input carries against its agent's pause.

        Raises:
            neuron_turn.ApprovalError: they do not fit, as that agent's resume would fail.
        """
        ...


def delegation_session(
    session: SessionId, position: int, task: JsonValue, nth: int = 0
) -> SessionId:
    """The session of the agent a `delegate` call of `session` runs.

    Named by where the call stands rather than by its id: the assistant message
    at `position` of the session's stored history (0 for the first message), the
    call's input `task`, and `nth` for the same task asked again in that message
    (0 for the first). A turn run again after its first attempt was lost (its
    worker killed) asks its model again, which names its calls anew but at the
    same place: the delegation finds the agent the first attempt started. A
    digest, as the task is the model's text.
    """
    return _session_named(session, position, _canonical(task), nth)


def delegation_sessions(
    session: SessionId, position: int, message: Sequence[ContentPart]
) -> dict[str, SessionId]:
    """The session of each `delegate` call of the assistant `message` at `position`, by call id."""
    asked: Counter[str] = Counter()
    sessions: dict[str, SessionId] = {}
    for part in message:
        if isinstance(part, ToolUsePart) and part.name == "delegate":
            task = _canonical(part.input)
            sessions[part.id] = _session_named(session, position, task, asked[task])
            asked[task] += 1
    return sessions


def _canonical(task: JsonValue) -> str:
    return json.dumps(task, sort_keys=True, ensure_ascii=False)


def _session_named(session: SessionId, position: int, task: str, nth: int) -> SessionId:
    key = f"{position}\n{nth}\n{task}".encode("utf-8", "surrogatepass")
    return f"{session}/delegate-{hashlib.sha256(key).hexdigest()[:16]}"


def answered_form(effect: Effect, call: ToolUsePart, own: SessionId | None) -> Effect:
    """The effect an answerer is given for `call`: a delegation runs in session `own`.

    `own` (None: the delegation gets no session) is the one `delegation_session`
    names: the first run gets the task there, and a resumed one
    (`ResumedDelegation`) the decisions.
    """
    if not isinstance(effect, DelegateEffect) or own is None:
        return effect
    if isinstance(call, ResumedDelegation):
        task = resume_input(own, call.decisions)
    else:
        task = effect.input.model_copy(update={"session": own})
    return effect.model_copy(update={"input": task})
