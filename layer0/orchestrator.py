"""`Orchestrator`: dispatches turns to agents and carries out their effects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import JsonValue

from .errors import OrchError
from .ids import AgentId, WorkflowId
from .query import QueryPayload
from .signal import SignalPayload
from .turn_input import TurnInput
from .turn_output import TurnOutput

__all__ = ["Orchestrator"]


@runtime_checkable
class Orchestrator(Protocol):
    """Runs agents' turns, executes the effects they declare, routes signals and queries."""

    async def dispatch(self, agent: AgentId, input: TurnInput) -> TurnOutput:
        """Run `agent` on `input` and return its output; raises `OrchError` on failure."""
        ...

    async def dispatch_many(
        self, tasks: Sequence[tuple[AgentId, TurnInput]]
    ) -> list[TurnOutput | OrchError]:
        """Run many dispatches; results in the order given, each may fail alone."""
        ...

    async def signal(self, target: WorkflowId, payload: SignalPayload) -> None:
        """Deliver `payload` to the running workflow `target`."""
        ...

    async def query(self, target: WorkflowId, payload: QueryPayload) -> JsonValue:
        """Ask the workflow `target` a read-only question."""
        ...
