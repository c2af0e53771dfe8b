"""The neuron-turn plugin: registers the orchestrator `"temporal"`.

Imports nothing heavy: temporalio is imported when the factory is called,
so listing plugins stays fast and works without the `temporal` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neuron_turn import RegisterOrchestrator, hookimpl

if TYPE_CHECKING:
    from .orchestrator import TemporalOrchestrator

__all__ = ["create_orchestrator", "register_orchestrators"]


def create_orchestrator(
    *, agents: object = None, store: object = None, **options: Any
) -> TemporalOrchestrator:
    """Return a `TemporalOrchestrator` built from `options` (`address=`, `task_queue=`, ...).

    `agents` and `store` are accepted and ignored, so a host can pass every
    orchestrator the same options: with Temporal, agents and store live on
    the workers (`neuron-turn worker`).

    Raises:
        ImportError: temporalio is missing; the message says which extra to install.
    """
    del agents, store
    try:
        from .orchestrator import TemporalOrchestrator
    except ImportError as exc:
        raise ImportError(
            f"the Temporal orchestrator needs temporalio ({exc}); "
            "install it with: pip install 'neuron-orch-temporal[temporal]'"
        ) from exc
    return TemporalOrchestrator(**options)


@hookimpl
def register_orchestrators(register: RegisterOrchestrator) -> None:
    """Offer the orchestrator `"temporal"`."""
    register("temporal", create_orchestrator)
