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

A delegation given a session (the turn has one, and reads its history: see
`neuron_turn.delegation_session`) can pause for approval: its workflow,
`<workflow>/a-<agent>-<digest of its session>`, waits for decisions, and
the delegation is answered at its pause, which holds the turn's call. The
resume of the turn (a later turn of the same workflow, hence the id without
the turn) hands the child its decisions with the `decide` update, keyed by
the resuming turn so that a retried attempt does not decide twice, and
waits for its next pause or its end. A parent resumed in another workflow
(its own ended while it waited: cancelled, say) finds no child under its
id: it starts one, whose first turn resumes the agent's session with the
decisions.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import TypeVar

from temporalio import activity
from temporalio.client import (
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError, is_cancelled_exception
from temporalio.service import RPCError, RPCStatusCode

from layer0 import DelegateEffect, DispatchFailed, TurnOutput, WorkflowId
from neuron_orch_local import Chain
from neuron_turn import AWAITING_APPROVAL, Decision, split_decisions

from ._delegating import delegating
from ._failures import orch_error
from ._payload_limit import payload_limit
from .approvals import DecideRequest, Settled
from .messages import Delegation, DispatchResult, TurnRequest, WorkflowInput
from .names import DECIDE_UPDATE, SETTLED_UPDATE, WORKFLOW_TYPE

__all__ = ["child_workflow_id", "run_delegation"]

R = TypeVar("R")


def child_workflow_id(request: TurnRequest, effect: DelegateEffect) -> WorkflowId:
    """Return the id of the workflow that answers `effect` for the turn of `request`."""
    session = effect.input.session
    if session is not None:
        digest = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"{request.workflow_id}/a-{effect.agent}-{digest}"
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
    handle = activity.client().get_workflow_handle(child_id, result_type=DispatchResult)
    after: int | None = None
    if decisions is not None:
        key = f"{request.workflow_id}/t{request.turn}"
        after = await _decide(handle, key, decisions)
        if after is None:  # no workflow holds the agent: one resumes its session
            handle = await _start(request, effect, chain, child_id, decided_by=key)
    else:
        handle = await _start(request, effect, chain, child_id)
    try:
        resumable = effect.input.session is not None
        output = await _settled(handle, after or 0) if resumable else None
        if output is None:
            output = (await handle.result()).output
    except asyncio.CancelledError as cancelled:
        await _cancel_with_turn(handle, cancelled)
        raise
    except WorkflowFailureError as exc:
        error = orch_error(exc.cause)
        raise error from error.__cause__
    except RPCError as exc:
        raise DispatchFailed(f"waiting for workflow {child_id!r} failed: {exc}") from exc
    held = effect.input.session is not None and output.exit_reason == AWAITING_APPROVAL
    answered.append(Delegation(agent=effect.agent, workflow_id=child_id, output=output, held=held))
    return child_id, output


async def _decide(
    handle: WorkflowHandle[object, DispatchResult], key: str, decisions: Sequence[Decision]
) -> int | None:
    """Hand the paused child its decisions; return the number of the pause they decided.

    `key` names the resuming turn: a retried attempt of it gets the pause an
    earlier one decided, rather than deciding the next. None: there is no such
    workflow (the parent paused in another one).

    Raises:
        OrchError: the child did not take them (it waits on no pause, or on other calls).
    """
    decide = DecideRequest(decisions=tuple(decisions), key=key)
    try:
        return await _update(handle, DECIDE_UPDATE, decide, int)
    except WorkflowUpdateFailedError as exc:
        raise DispatchFailed(
            f"workflow {handle.id!r} did not take the decisions: {exc.cause}"
        ) from exc
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return None
        raise DispatchFailed(f"deciding workflow {handle.id!r} failed: {exc}") from exc


async def _settled(handle: WorkflowHandle[object, DispatchResult], after: int) -> TurnOutput | None:
    """The output of the child's first pause after the `after`th; None once it ended."""
    try:
        settled = await _update(handle, SETTLED_UPDATE, after, Settled)
    except (WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, RPCError):
        return None  # ended before it could answer, say: its result says how
    return None if settled.pause is None else settled.pause.result.output


async def _update(
    handle: WorkflowHandle[object, DispatchResult], name: str, arg: object, result: type[R]
) -> R:
    """Run update `name` of the child; cancelled, the wait raises `CancelledError`.

    Awaited plainly, the client turns a cancellation into an update error,
    and the turn's cancellation would not reach `_cancel_with_turn`.
    """
    updating = asyncio.ensure_future(handle.execute_update(name, arg, result_type=result))
    try:
        return await asyncio.shield(updating)
    except asyncio.CancelledError:
        updating.cancel()
        raise


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
    request: TurnRequest,
    effect: DelegateEffect,
    chain: Chain,
    child_id: WorkflowId,
    decided_by: str | None = None,
) -> WorkflowHandle[object, DispatchResult]:
    assert request.policy is not None
    client = activity.client()
    params = WorkflowInput(
        agent=effect.agent,
        input=effect.input,
        chain=chain,
        policy=request.policy,
        parent=request.workflow_id,
        decided_by=decided_by,
        held=effect.input.session is not None,
        delegated_for=delegating(request.input.session, request.delegated_for),
        payload_limit=payload_limit(client),
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
