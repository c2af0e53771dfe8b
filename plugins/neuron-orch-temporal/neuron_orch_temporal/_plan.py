"""Checking a turn's effects before any of them runs, on the worker that ran the turn.

The worker knows its agents, its custom effect handlers and (through its
client) which workflows exist, so the turn's activity checks these with
neuron-orch-local's `check_effects`: a turn whose effects cannot all run has
none of them run, and callers see the same errors on both orchestrators. The
one check of Temporal's own: a signal's target must still be running.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence

from layer0 import AgentId, Effect, SignalEffect, SignalFailed, WorkflowId
from neuron_orch_local import check_effects as check_names

__all__ = ["TargetState", "check_effects"]

TargetState = Callable[[WorkflowId], Awaitable[bool | None]]
"""Whether a workflow is running (True), finished (False) or unknown (None)."""


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
        DispatchFailed: a custom effect type has no handler, or the turn
            declared more than one handoff.
        SignalFailed: a signal names a workflow that has finished (Temporal
            delivers signals to running workflows only).
    """
    running: dict[WorkflowId, bool | None] = {}
    for effect in effects:
        if isinstance(effect, SignalEffect) and effect.target not in running:
            running[effect.target] = await target_state(effect.target)
    check_names(
        effects,
        owner=owner,
        agents=agents,
        workflows={target for target, state in running.items() if state is not None},
        custom_types=custom_types,
        handlers_given_to="the worker",
    )
    for target, state in running.items():
        if state is False:
            raise SignalFailed(
                f"{owner} signals workflow {target!r}, which has finished; "
                "Temporal delivers signals to running workflows only"
            )
