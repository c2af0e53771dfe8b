"""Waiting for a workflow's next pause for approval, beside the wait for its end."""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import (
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.service import RPCError

from .approvals import Settled
from .names import SETTLED_UPDATE

__all__ = ["next_pause"]


async def next_pause(handle: WorkflowHandle[Any, Any], after: int | None) -> Settled | None:
    """Wait for the workflow's next pause (see `AgentWorkflow.settled`); None if it cannot tell.

    The result wait beside it reports the workflow's end and failures; this
    one only ever adds a pause, so its own errors (a workflow that ended
    first, a worker from before approvals) leave that wait to answer.
    """
    if after is None:
        return None
    try:
        settled: Settled = await handle.execute_update(SETTLED_UPDATE, after, result_type=Settled)
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            # The SDK puts its error in place of the caller's cancellation: give it back.
            raise asyncio.CancelledError from None
        return None
    except (WorkflowUpdateFailedError, RPCError):
        return None
    return settled
