"""Checking a turn's effects before any of them runs, on the worker that ran the turn.

The worker knows its agents, its custom effect handlers and (through its
client) which workflows exist, so the turn's activity checks these; a turn
whose effects cannot all run has none of them run. The messages are
neuron-orch-local's, so callers see the same errors on both orchestrators.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence

from layer0 import (
    AgentId,
    AgentNotFound,
    CustomEffect,
    DelegateEffect,
    DispatchFailed,
    Effect,
    HandoffEffect,
    SignalEffect,
    SignalFailed,
    WorkflowId,
    WorkflowNotFound,
)

__all__ = ["TargetState", "check_effects", "owner"]

TargetState = Callable[[WorkflowId], Awaitable[bool | None]]
"""Whether a workflow is running (True), finished (False) or unknown (None)."""


def owner(agent: AgentId, workflow_id: WorkflowId) -> str:
    """Return how errors name a turn: `agent 'a' (workflow w)`."""
    return f"agent {agent!r} (workflow {workflow_id})"


async def check_effects(
    effects: Sequence[Effect],
    *,
    owner: str,
    agents: Collection[AgentId],
    custom_types: Collection[str],
    target_state: TargetState,
) -> None:
    """Check that every effect can run.

    Raises:
        AgentNotFound: a delegate or handoff names an agent the worker does not host.
        WorkflowNotFound: a signal names a workflow that does not exist.
        SignalFailed: a signal names a workflow that has finished (Temporal
            delivers signals to running workflows only).
        DispatchFailed: a custom effect type has no handler, or the turn
            declared more than one handoff.
    """
    handoffs: list[AgentId] = []
    for effect in effects:
        if isinstance(effect, DelegateEffect):
            _known(effect.agent, agents, owner, "delegates to")
        elif isinstance(effect, HandoffEffect):
            _known(effect.agent, agents, owner, "hands off to")
            handoffs.append(effect.agent)
        elif isinstance(effect, SignalEffect):
            await _signallable(effect.target, owner, target_state)
        elif isinstance(effect, CustomEffect) and effect.effect_type not in custom_types:
            registered = ", ".join(sorted(custom_types)) or "none"
            raise DispatchFailed(
                f"{owner} declared a custom effect of type {effect.effect_type!r}, "
                f"which has no handler; registered types: {registered} "
                "(give the worker custom_handlers={effect_type: handler})"
            )
    if len(handoffs) > 1:
        targets = ", ".join(repr(agent) for agent in handoffs)
        raise DispatchFailed(
            f"{owner} declared {len(handoffs)} handoffs (to {targets}); "
            "a turn can hand the conversation to one agent only"
        )


def _known(agent: AgentId, agents: Collection[AgentId], owner: str, verb: str) -> None:
    if agent not in agents:
        raise AgentNotFound(
            agent,
            f"{owner} {verb} unknown agent {agent!r}; "
            f"available: {', '.join(sorted(agents)) or 'none'}",
        )


async def _signallable(target: WorkflowId, owner: str, target_state: TargetState) -> None:
    running = await target_state(target)
    if running is None:
        raise WorkflowNotFound(target, f"{owner} signals workflow {target!r}, which does not exist")
    if not running:
        raise SignalFailed(
            f"{owner} signals workflow {target!r}, which has finished; "
            "Temporal delivers signals to running workflows only"
        )
