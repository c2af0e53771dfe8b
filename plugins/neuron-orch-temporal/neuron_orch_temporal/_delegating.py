"""Whose session a delegation runs for: what a sessionless delegated turn records.

As `neuron_orch_local.delegating_from` does in one process: a turn's
delegations are delegated for its session, or, when it has none, for the
session its own run was delegated for, so a record kept without a session
names the nearest delegating session at any depth
(`layer0.TurnRecord.delegated_for`), and `neuron_turn.forget_session`
finds it. A Temporal worker runs each turn in an activity, and each
delegation in a workflow of its own, maybe in another process: the session
travels in what starts them (`WorkflowInput.delegated_for`,
`TurnRequest.delegated_for`), not in a context variable.
"""

from __future__ import annotations

from layer0 import SessionId

__all__ = ["delegating"]


def delegating(session: SessionId | None, delegated_for: SessionId | None) -> SessionId | None:
    """Return the session the delegations of a turn on `session` are delegated for.

    Why: a delegate given its own session breaks the chain (its delegates are
    for its session); one given none carries on the session above it.
    """
    return session if session is not None else delegated_for
