"""Approvals on Temporal: a paused turn's workflow waits durably for a person's decisions.

When a turn exits `{"custom": "awaiting_approval"}` (see
`neuron_turn.loop.approval`), its workflow carries out the turn's effects
(the history append records the pause), then waits, in its own history,
for the decisions: a worker may die and another take over meanwhile. The
decisions arrive as a Temporal update (`TemporalOrchestrator.decide`), which
the workflow validates before accepting it: every pending call decided once,
nothing else, for the pause that waits now. A rejected update changes nothing
and its sender gets the error (`MissingDecisionError`, ...). An accepted one
starts the resume turn (`neuron_turn.resume_input`) once; a second
`decide` for the same pause is rejected.

A pause nobody decides within `TurnPolicy.approval_timeout` is resumed with
every pending call denied, reason `approval timed out`: the model reads the
denials and answers, and the session is left consistent (no call without a
result), which a workflow that just ended would not leave.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Final, Never

from pydantic import BaseModel, ConfigDict
from temporalio.exceptions import ApplicationError

from layer0 import AgentId, SessionId, WorkflowId
from neuron_turn import (
    ApprovalError,
    AwaitingApprovalError,
    Decision,
    DuplicateDecisionError,
    InvalidEditedInputError,
    MalformedDecisionsError,
    MissingDecisionError,
    NotAwaitingApprovalError,
    PendingCall,
    UnknownDecisionError,
)

from .messages import DispatchResult

__all__ = [
    "TIMED_OUT_REASON",
    "AwaitingApproval",
    "DecideRequest",
    "Pause",
    "Settled",
    "approval_error",
    "check_decisions",
    "refusal",
    "timed_out",
]

TIMED_OUT_REASON: Final = "approval timed out"
"""The reason given to the model for each call denied because nobody decided in time."""

_KINDS: Final[dict[str, type[ApprovalError]]] = {
    cls.__name__: cls
    for cls in (
        AwaitingApprovalError,
        DuplicateDecisionError,
        InvalidEditedInputError,
        MalformedDecisionsError,
        MissingDecisionError,
        NotAwaitingApprovalError,
        UnknownDecisionError,
    )
}


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class AwaitingApproval(_Message):
    """A workflow waiting for decisions: which pause, session and calls, and until when."""

    workflow_id: WorkflowId
    agent: AgentId
    """The agent whose turn paused."""
    session: SessionId
    pause: int
    """This workflow's pauses so far, this one included (1 for the first)."""
    calls: tuple[PendingCall, ...]
    """The calls waiting, as the model sent them."""
    deadline: datetime
    """When the calls are denied with `approval timed out` if nobody decided (UTC)."""
    refused: str | None = None
    """Why the resume refused the decisions sent for these calls last, before anything
    ran (an edited input the tool rejects): they wait for decisions again."""
    refused_type: str | None = None
    """The `neuron_turn.ApprovalError` class that refused them."""
    held_by: WorkflowId | None = None
    """The workflow whose pause lists these calls too, as those its delegated agent waits
    on (None: no other). Decided there, both go on; decided here, this agent goes on
    alone, and should it pause again, that workflow lists its calls anew."""


class DecideRequest(_Message):
    """The decisions for one pause of a workflow (the payload of the `decide` update)."""

    decisions: tuple[Decision, ...]
    pause: int | None = None
    """The pause these decide (None: whichever waits); a stale number is rejected."""
    key: str | None = None
    """Names the sender's one attempt at deciding (a resuming turn's, for a delegated
    agent): the same key again is answered with the pause it decided, and changes nothing."""


class Pause(_Message):
    """What a workflow reports when a turn paused: the pause and the dispatch so far."""

    waiting: AwaitingApproval
    result: DispatchResult
    """The dispatch as it stands: its output is the paused turn's."""


class Settled(_Message):
    """The `settled` update's answer: the pause it waited for, or None if the workflow ended."""

    pause: Pause | None = None


def check_decisions(
    waiting: AwaitingApproval | None, request: DecideRequest, *, workflow_id: WorkflowId
) -> None:
    """Reject `request` unless it decides every call of the pause that waits, once.

    Raises:
        ApplicationError: typed with the `neuron_turn` approval error's class
            name (`approval_error` rebuilds it on the client).
    """
    if waiting is None:
        _reject(NotAwaitingApprovalError, f"workflow {workflow_id!r} is not awaiting approval")
    if request.pause is not None and request.pause != waiting.pause:
        _reject(
            NotAwaitingApprovalError,
            f"the decisions are for pause {request.pause} of workflow {workflow_id!r}, "
            f"which waits on pause {waiting.pause}",
        )
    ids = [call.id for call in waiting.calls]
    twice = sorted(i for i, n in Counter(d.id for d in request.decisions).items() if n > 1)
    if twice:
        _reject(DuplicateDecisionError, f"call(s) decided more than once: {', '.join(twice)}")
    unknown = [d.id for d in request.decisions if d.id not in ids]
    if unknown:
        _reject(
            UnknownDecisionError,
            f"call(s) not pending in workflow {workflow_id!r}: {', '.join(unknown)}; "
            f"pending: {', '.join(ids)}",
        )
    decided = {d.id for d in request.decisions}
    missing = [i for i in ids if i not in decided]
    if missing:
        _reject(
            MissingDecisionError,
            f"pending call(s) of workflow {workflow_id!r} without a decision: {', '.join(missing)}",
        )


def timed_out(waiting: AwaitingApproval) -> tuple[Decision, ...]:
    """Return the decisions denying every call of `waiting`, reason `approval timed out`."""
    return tuple(Decision.deny(call.id, TIMED_OUT_REASON) for call in waiting.calls)


def approval_error(error: ApplicationError) -> ApprovalError | None:
    """Return the `neuron_turn` approval error a rejected `decide` update stands for, if any.

    Also a resume turn's failure: its decisions refused before anything ran.
    """
    cls = _KINDS.get(error.type or "")
    return None if cls is None else cls(error.message)


def refusal(waiting: AwaitingApproval) -> ApprovalError | None:
    """Return the error that refused the decisions `waiting` asks for again, if any."""
    if waiting.refused is None:
        return None
    cls = _KINDS.get(waiting.refused_type or "", ApprovalError)
    return cls(waiting.refused)


def _reject(cls: type[ApprovalError], message: str) -> Never:
    raise ApplicationError(message, type=cls.__name__, non_retryable=True)
