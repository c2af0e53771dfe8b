"""Delegations a turn waits on, run from the turn's activity as agent workflows.

The turn runs inside the `execute_turn` activity, so the delegations it
waits on cannot be child workflows of its workflow: the activity starts
each as an agent workflow of its own on the same task queue (its `parent`
naming the delegating workflow, its chain one step deeper) and waits for
its result while heartbeating, and the model gets the child's answer
(neuron-orch-local's `DelegationAnswerer`, the same conventions as
`LocalOrchestrator`'s).

The child's id is deterministic, `<workflow>/t<turn>/a-<agent>-<digest of
its input>`: when the activity is retried, the same delegation finds the
workflow an earlier attempt started (running or finished) and takes its
result instead of running the agent again. When the turn's workflow is
cancelled, the delegations its turn waits on are cancelled with it.

A delegation given a session of its own (`neuron_turn.delegation_session`:
its turn reads its history, so it can pause on the child's held calls) is
`<workflow>/a-<agent>-s<digest of the session>` instead, the same for the
turn that resumes it: the child's workflow waits at its pause for
decisions, the activity answers with the paused output (the turn then
pauses too), and the resumed delegation sends that workflow the decisions
(`decide`) and waits for its next pause or its end. A child that went on
without them (nobody decided within its approval timeout, or someone
decided it directly) is answered with how it ended.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence

from temporalio import activity
from temporalio.client import WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import (
    ApplicationError,
    WorkflowAlreadyStartedError,
    is_cancelled_exception,
)
from temporalio.service import RPCError, RPCStatusCode

from layer0 import DelegateEffect, DispatchFailed, TurnOutput, WorkflowId
from neuron_orch_local import Chain
from neuron_turn import Decision, NotAwaitingApprovalError, split_decisions

from ._failures import orch_error
from ._settled import next_pause
from .approvals import DecideRequest, approval_error
from .messages import Delegation, DispatchResult, TurnRequest, WorkflowInput
from .names import DECIDE_UPDATE, WORKFLOW_TYPE

__all__ = ["child_workflow_id", "run_delegation"]


def child_workflow_id(request: TurnRequest, effect: DelegateEffect) -> WorkflowId:
    """Return the id of the workflow that answers `effect` for the turn of `request`."""
    session = effect.input.session
    if session is not None:
        # A later turn resumes it: the same workflow, whatever the input then.
        digest = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"{request.workflow_id}/a-{effect.agent}-s{digest}"
    digest = hashlib.sha256(effect.input.model_dump_json().encode()).hexdigest()[:16]
    return f"{request.workflow_id}/t{request.turn}/a-{effect.agent}-{digest}"


async def run_delegation(
    request: TurnRequest, answered: list[Delegation], effect: DelegateEffect, chain: Chain
) -> tuple[WorkflowId, TurnOutput]:
    """Run `effect`'s agent in its own workflow, wait for its output, add it to `answered`.

    Raises:
        OrchError: the child workflow failed (as `TemporalOrchestrator.run` raises it).
    """
    assert request.policy is not None  # answered only when the workflow sent one
    child_id = child_workflow_id(request, effect)
    decisions, _ = split_decisions(effect.input.metadata)
    if decisions is None:
        handle = await _start(request, effect, chain, child_id)
        after: int | None = 0
    else:
        handle = activity.client().get_workflow_handle(child_id, result_type=DispatchResult)
        after = await _decide(handle, decisions)
    try:
        result = await _paused_or_ended(handle, after if effect.input.session else None)
    except asyncio.CancelledError as cancelled:
        await _cancel_with_turn(handle, cancelled)
        raise
    except WorkflowFailureError as exc:
        error = orch_error(exc.cause)
        raise error from error.__cause__
    except RPCError as exc:
        raise DispatchFailed(f"waiting for workflow {child_id!r} failed: {exc}") from exc
    answered.append(Delegation(agent=effect.agent, workflow_id=child_id, output=result.output))
    return child_id, result.output


async def _paused_or_ended(
    handle: WorkflowHandle[object, DispatchResult], after: int | None
) -> DispatchResult:
    """The child's dispatch at its first pause after the `after`th, or at its end.

    `after` None: at its end only (a child without a session ends at a pause).
    """
    settled = await next_pause(handle, after)
    if settled is not None and settled.pause is not None:
        return settled.pause.result
    return await handle.result()


async def _decide(
    handle: WorkflowHandle[object, DispatchResult], decisions: Sequence[Decision]
) -> int | None:
    """Send the paused child `decisions`; return its pause they decide (None: it went on).

    Raises:
        DispatchFailed: the child refused them (checked before, so only when it
            changed meanwhile), or Temporal could not deliver them.
    """
    request = DecideRequest(decisions=tuple(decisions))
    try:
        decided: int = await handle.execute_update(DECIDE_UPDATE, request, result_type=int)
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause
        refused = approval_error(cause) if isinstance(cause, ApplicationError) else None
        if isinstance(refused, NotAwaitingApprovalError):
            return None  # decided or timed out meanwhile: how it ends answers
        raise DispatchFailed(f"workflow {handle.id!r} did not take the decisions: {cause}") from exc
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return None  # it has ended: its end answers
        raise DispatchFailed(f"deciding workflow {handle.id!r} failed: {exc}") from exc
    return decided


async def _cancel_with_turn(
    handle: WorkflowHandle[object, DispatchResult], cancelled: asyncio.CancelledError
) -> None:
    """Cancel the delegation's workflow, when the turn's was cancelled; wait for it to end.

    As Temporal cancels a child workflow with its parent: the delegation stops
    too, its own turn's part kept (see `workflow`), rather than running on for
    nobody. A turn stopped because its worker shuts down leaves its delegation
    running. A cancel that fails is noted on `cancelled`, which goes on.
    """
    details = activity.cancellation_details()
    if details is None or not details.cancel_requested:
        return
    try:
        await handle.cancel()
        await handle.result()
    except WorkflowFailureError as exc:
        if not is_cancelled_exception(exc.cause):
            cancelled.add_note(f"delegation {handle.id} ended: {orch_error(exc.cause)}")
    except RPCError as exc:
        cancelled.add_note(f"delegation {handle.id} could not be cancelled: {exc}")
    else:
        cancelled.add_note(f"delegation {handle.id} finished before it could be cancelled")


async def _start(
    request: TurnRequest, effect: DelegateEffect, chain: Chain, child_id: WorkflowId
) -> WorkflowHandle[object, DispatchResult]:
    assert request.policy is not None
    client = activity.client()
    params = WorkflowInput(
        agent=effect.agent,
        input=effect.input,
        chain=chain,
        policy=request.policy,
        parent=request.workflow_id,
    )
    try:
        return await client.start_workflow(
            WORKFLOW_TYPE,
            params,
            id=child_id,
            task_queue=activity.info().task_queue,
            result_type=DispatchResult,
            # An earlier attempt of this turn started it: use it, running or finished.
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            memo={"agent": effect.agent},
        )
    except WorkflowAlreadyStartedError:
        return client.get_workflow_handle(child_id, result_type=DispatchResult)
    except RPCError as exc:
        raise DispatchFailed(f"starting workflow {child_id!r} failed: {exc}") from exc
