"""`WorkflowView`: what a workflow knows about itself, for its queries.

The queries and their JSON answers are neuron-orch-local's (`QUERY_TYPES`,
`answer_query`): a view has the shape of its `WorkflowLike`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import JsonValue

from layer0 import AgentId, SignalPayload, TurnOutput, WorkflowId

from .messages import Delegation

__all__ = ["Status", "WorkflowView"]

Status = Literal["running", "completed", "failed"]
"""Where a workflow is in its life: neuron-orch-local's `WorkflowStatus` values."""


@dataclass(slots=True)
class WorkflowView:
    """What a workflow knows about itself, kept by the workflow and read by its queries."""

    workflow_id: WorkflowId
    agent: AgentId
    parent: WorkflowId | None
    status: Status = "running"
    route: list[AgentId] = field(default_factory=list)
    output: TurnOutput | None = None
    error: str | None = None
    inbox: list[SignalPayload] = field(default_factory=list)
    delegations: list[Delegation] = field(default_factory=list)
    progress: list[JsonValue] = field(default_factory=list)
    """The progress events the turns' activities signalled, in arrival order."""
