"""`DispatchResult`: everything one dispatch produced, not just the final output."""

from __future__ import annotations

from dataclasses import dataclass

from layer0 import AgentId, TurnOutput, WorkflowId

from .workflow import Delegation

__all__ = ["DispatchResult"]


@dataclass(frozen=True, slots=True)
class DispatchResult:
    """The outcome of `LocalOrchestrator.run`.

    `dispatch` returns only `output`, as the layer0 protocol asks; `run`
    returns this, so a caller can also see the workflow id it was given and
    what the delegations of the workflow's turns returned.
    """

    workflow_id: WorkflowId
    agent: AgentId
    """The agent whose output this is: the one dispatched to, or the last handoff's."""
    output: TurnOutput
    route: tuple[AgentId, ...]
    """The agents that ran in this workflow, in order (more than one after handoffs)."""
    delegations: tuple[Delegation, ...]
    """Results of the delegations the workflow's turns made, in the order they ran."""
