"""The `neuron_turn` entry point: registers the orchestrator `local`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neuron_turn import hookimpl

from .orchestrator import LocalOrchestrator

if TYPE_CHECKING:
    from neuron_turn import RegisterOrchestrator

__all__ = ["register_orchestrators"]


@hookimpl
def register_orchestrators(register: RegisterOrchestrator) -> None:
    """Offer `local`; options are `LocalOrchestrator`'s arguments (`agents`, `store`, …)."""
    register("local", LocalOrchestrator)
