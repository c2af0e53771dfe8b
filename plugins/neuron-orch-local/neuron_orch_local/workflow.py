"""Workflow records: what the orchestrator remembers about each dispatch.

A workflow is one dispatch and its handoffs: the agent dispatched to, then
each agent a handoff passed the conversation to. A delegation runs in a
child workflow of its own, linked by `parent`. Records are immutable
snapshots; the orchestrator replaces them as a workflow moves on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from layer0 import AgentId, SignalPayload, TurnOutput, WorkflowId

__all__ = ["Delegation", "WorkflowRecord", "WorkflowStatus"]


class WorkflowStatus(StrEnum):
    """Where a workflow is in its life."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Delegation:
    """The result of one `delegate` effect: who ran, in which child workflow, with what output."""

    agent: AgentId
    workflow_id: WorkflowId
    output: TurnOutput


@dataclass(frozen=True, slots=True)
class WorkflowRecord:
    """A snapshot of one workflow: status, agents, last output, inbox, delegations."""

    workflow_id: WorkflowId
    agent: AgentId
    """The agent running now, or the last one that ran (after handoffs, the last of `route`)."""
    status: WorkflowStatus = WorkflowStatus.RUNNING
    parent: WorkflowId | None = None
    """The workflow whose `delegate` effect started this one, if any."""
    route: tuple[AgentId, ...] = ()
    """The agents that ran, in order: the one dispatched to, then each handoff's."""
    output: TurnOutput | None = None
    """The last output of a turn in this workflow."""
    error: str | None = None
    """Why the workflow failed (`type: message`), when it did."""
    inbox: tuple[SignalPayload, ...] = ()
    """Signals delivered to this workflow, oldest first; kept when the workflow is continued."""
    delegations: tuple[Delegation, ...] = ()
    """Results of the delegations made by this workflow's turns, in the order they ran."""
