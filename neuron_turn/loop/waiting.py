"""What a paused session waits on now, read from the store: the calls its resume decides.

A paused turn's output lists its pending calls (`pending_approvals`), but
that listing ages: a delegated agent resumed on its own (its session given
decisions directly) may since wait on other calls, or on none. Read from
the sessions' stored histories instead, the listing is the one a resume of
the session is checked against now, so a caller that no longer has the
output (a form opened later), or whose listing went stale (an orchestrator
asking for decisions again), learns what to decide.
"""

from __future__ import annotations

from layer0 import SessionId, StateReader

from ._stored_history import read_history
from .approval import PendingCall, last_assistant, pending_in
from .effect_answers import delegation_sessions
from .provider import ProviderMessage

__all__ = ["waiting_calls"]


async def waiting_calls(state: StateReader, session: SessionId) -> list[PendingCall]:
    """Return the calls paused `session` waits on now, as its pause lists them.

    Its own held calls first, then, for each `delegate` call held for its
    agent, the calls that agent waits on now, named `<call id>/<their id>`
    with `agent` naming it (any depth: `d1/d2/c1` names the innermost). An
    agent that went on by itself and waits on nothing lists nothing: the
    session's resume takes its last answer. Empty: the session waits on
    nothing (or has no history).

    `state` must hold the delegated agents' sessions too, as it does for the
    turns that delegated (they read their agents' pauses from their own reader).

    Raises:
        layer0.RetryableError: the store failed.
        layer0.NonRetryableError: the store judged a read (a corrupt file).
        layer0.ContextAssemblyError: a stored history does not parse.
    """
    return await _waiting(state, session, await read_history(state, session), None)


async def _waiting(
    state: StateReader,
    session: SessionId,
    history: list[ProviderMessage],
    agent: str | None,
) -> list[PendingCall]:
    """The calls `session` (whose stored `history` this is) waits on; `agent` runs it."""
    index = last_assistant(history)
    sessions = {} if index is None else delegation_sessions(session, index, history[index].content)
    own: list[PendingCall] = []
    delegated: list[PendingCall] = []
    for call in pending_in(history):
        child, child_agent = sessions.get(call.id), _agent(call.input)
        child_history = [] if child is None else await read_history(state, child)
        if child is None or child_agent is None or not child_history:
            # Not delegated yet: held by the session's own approval policy.
            own.append(PendingCall(id=call.id, name=call.name, input=call.input, agent=agent))
            continue
        for held in await _waiting(state, child, child_history, child_agent):
            delegated.append(held.model_copy(update={"id": f"{call.id}/{held.id}"}))
    return own + delegated


def _agent(task: object) -> str | None:
    """The agent a `delegate` call's input names (None: it names none)."""
    named = task.get("agent") if isinstance(task, dict) else None
    return named if isinstance(named, str) else None
