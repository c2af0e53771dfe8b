"""`Worker`: hosts agents for an orchestrator whose turns run in other processes.

An in-process orchestrator runs turns itself; a distributed one (Temporal)
hands them to workers, which hold the agents' turns and the state store.
`neuron-turn worker` runs one, built from plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from layer0 import AgentId, StateStore, Turn

__all__ = ["Worker"]


@runtime_checkable
class Worker(Protocol):
    """Runs the turns an orchestrator dispatches to the agents it hosts, until cancelled."""

    async def run(self, agents: Mapping[AgentId, Turn], store: StateStore) -> None:
        """Host `agents` (their effects go to `store`) until the task is cancelled."""
        ...
