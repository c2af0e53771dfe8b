"""Handlers for `custom` effects, registered with the orchestrator by `effect_type`.

One handler serves every orchestrator that follows these conventions
(neuron-orch-temporal's workers take the same `custom_handlers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from layer0 import AgentId, CustomEffect, WorkflowId

__all__ = ["CustomEffectHandler", "EffectContext"]


@dataclass(frozen=True, slots=True)
class EffectContext:
    """Which turn declared the effect being handled."""

    workflow_id: WorkflowId
    agent: AgentId


class CustomEffectHandler(Protocol):
    """Carries out `custom` effects of one `effect_type`.

    Any async callable of this shape will do. An exception it raises fails
    the dispatch with `DispatchFailed`, the exception chained as the cause.

    Example::

        async def notify(effect: CustomEffect, context: EffectContext) -> None:
            await outbox.put((context.workflow_id, effect.data))


        LocalOrchestrator(agents, store, custom_handlers={"notify": notify})
    """

    async def __call__(self, effect: CustomEffect, context: EffectContext, /) -> None:
        """Carry out `effect`, declared by the turn described by `context`."""
        ...
