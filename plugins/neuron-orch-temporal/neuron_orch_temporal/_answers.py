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
"""

from __future__ import annotations

import asyncio
import hashlib

from temporalio import activity
from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError, is_cancelled_exception
from temporalio.service import RPCError

from layer0 import DelegateEffect, DispatchFailed, TurnOutput, WorkflowId
from neuron_orch_local import Chain

from ._failures import orch_error
from .messages import Delegation, DispatchResult, TurnRequest, WorkflowInput
from .names import WORKFLOW_TYPE

__all__ = ["child_workflow_id", "run_delegation"]


def child_workflow_id(request: TurnRequest, effect: DelegateEffect) -> WorkflowId:
    """Return the id of the workflow that answers `effect` for the turn of `request`."""
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
    handle = await _start(request, effect, chain, child_id)
    try:
        result = await handle.result()
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
