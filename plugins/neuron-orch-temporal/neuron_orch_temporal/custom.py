"""Handlers for `custom` effects, given to the worker by `effect_type`.

The same shape as neuron-orch-local's, so one handler serves both
orchestrators. On Temporal a handler runs in an activity: at least once,
retried on failure like a memory effect, so make it idempotent (the
`EffectContext` names the workflow and agent to key it by).
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
    """Carries out `custom` effects of one `effect_type`; any async callable of this shape."""

    async def __call__(self, effect: CustomEffect, context: EffectContext, /) -> None:
        """Carry out `effect`, declared by the turn described by `context`."""
        ...
