"""Answers to queries: read-only JSON views of a workflow, in neuron-orch-local's shapes.

- `status`: `{workflow_id, status, agent, exit_reason, parent, route, error}`;
- `inbox`: the signals received, oldest first;
- `output`: the last `TurnOutput` as JSON, or null before there is one;
- `delegations`: `[{agent, workflow_id, output}]` in effect order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import JsonValue, TypeAdapter

from layer0 import AgentId, ExitReason, SignalPayload, TurnOutput, WorkflowId

from .messages import Delegation

__all__ = ["WorkflowView"]

_EXIT_REASON: Final = TypeAdapter[ExitReason](ExitReason)

Status = Literal["running", "completed", "failed"]


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

    def status_json(self) -> JsonValue:
        """Answer the `status` query."""
        exit_reason = None
        if self.output is not None:
            exit_reason = _EXIT_REASON.dump_python(self.output.exit_reason, mode="json")
        return {
            "workflow_id": self.workflow_id,
            "status": self.status,
            "agent": self.agent,
            "exit_reason": exit_reason,
            "parent": self.parent,
            "route": list(self.route),
            "error": self.error,
        }

    def inbox_json(self) -> JsonValue:
        """Answer the `inbox` query."""
        return [payload.model_dump(mode="json") for payload in self.inbox]

    def output_json(self) -> JsonValue:
        """Answer the `output` query."""
        return _output_json(self.output)

    def delegations_json(self) -> JsonValue:
        """Answer the `delegations` query."""
        return _delegations_json(self.delegations)


def _output_json(output: TurnOutput | None) -> JsonValue:
    return None if output is None else output.model_dump(mode="json")


def _delegations_json(delegations: Sequence[Delegation]) -> JsonValue:
    return [
        {"agent": d.agent, "workflow_id": d.workflow_id, "output": _output_json(d.output)}
        for d in delegations
    ]
