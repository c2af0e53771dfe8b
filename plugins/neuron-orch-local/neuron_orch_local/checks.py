"""The checks made before a turn's effects run, and the errors they raise.

A turn whose effects cannot all run has none of them run: before the first
effect, the orchestrator checks that the agents and workflows they name
exist, that every custom effect type has a handler, that the turn hands off
at most once (`check_effects`), that every effect is inside the agent's
`layer0.EffectPolicy` (`check_policy`), and that no delegation or handoff
breaks the depth limit or closes a cycle (`Chain.follow`). Errors name the turn as
`effect_owner` does, so callers see the same errors on every orchestrator.

A model declaring an effect through an effect tool is told at once instead
(`call_refusal`, which the orchestrators' answerers use, see
`neuron_orch_local.delegation`): the call gets the refusal as its result and
declares nothing, so a hostile or mistaken model cannot have its whole turn,
its history with it, refused after it ended.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Sequence

from layer0 import (
    APPEND_HISTORY,
    AgentId,
    AgentNotFound,
    CustomEffect,
    DelegateEffect,
    DispatchFailed,
    Effect,
    EffectPolicy,
    EffectRefused,
    HandoffEffect,
    HistoryAppend,
    SessionId,
    SignalEffect,
    WorkflowId,
    WorkflowNotFound,
    effect_refusal,
)

from .chain import Chain

__all__ = ["call_refusal", "check_effects", "check_policy", "effect_owner", "require_agent"]


def effect_owner(agent: AgentId, workflow_id: WorkflowId) -> str:
    """Return how errors name a turn: `agent 'a' (workflow w)`."""
    return f"agent {agent!r} (workflow {workflow_id})"


def require_agent(agent: AgentId, agents: Collection[AgentId]) -> None:
    """Check that a caller dispatches to an agent there is.

    Raises:
        AgentNotFound: `agent` is not one of `agents`; the message lists them.
    """
    if agent not in agents:
        raise AgentNotFound(agent, f"no agent named {agent!r}; available: {_listed(agents)}")


def check_effects(
    effects: Sequence[Effect],
    *,
    owner: str,
    agents: Collection[AgentId],
    workflows: Container[WorkflowId],
    custom_types: Collection[str],
    handlers_given_to: str,
) -> None:
    """Check that every effect of one turn can run, in effect order.

    Args:
        effects: the turn's effects.
        owner: the turn, as `effect_owner` names it.
        agents: the agents a delegation or handoff may name.
        workflows: the workflows a signal may name.
        custom_types: the custom effect types that have a handler.
        handlers_given_to: what takes `custom_handlers`, named in the error
            about a missing one (`LocalOrchestrator`, `the worker`).

    Raises:
        AgentNotFound: a delegate or handoff names an agent that does not exist.
        WorkflowNotFound: a signal names a workflow that does not exist.
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
        elif isinstance(effect, SignalEffect) and effect.target not in workflows:
            raise WorkflowNotFound(
                effect.target, f"{owner} signals workflow {effect.target!r}, which does not exist"
            )
        elif isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY:
            _history_append(effect, owner)
        elif isinstance(effect, CustomEffect) and effect.effect_type not in custom_types:
            raise DispatchFailed(
                f"{owner} declared a custom effect of type {effect.effect_type!r}, "
                f"which has no handler; registered types: {_listed(custom_types)} "
                f"(give {handlers_given_to} custom_handlers={{effect_type: handler}})"
            )
    if len(handoffs) > 1:
        targets = ", ".join(repr(agent) for agent in handoffs)
        raise DispatchFailed(
            f"{owner} declared {len(handoffs)} handoffs (to {targets}); "
            "a turn can hand the conversation to one agent only"
        )


def check_policy(
    effects: Sequence[Effect], *, owner: str, policy: EffectPolicy, session: SessionId | None
) -> None:
    """Check that every effect of one turn of `session` is inside `policy`.

    Whoever wrote the turn's output (a model through effect tools, a
    hand-written or third-party Turn), an effect outside the policy of the
    agent the orchestrator dispatched is refused, and with it the whole turn:
    none of its effects run.

    Raises:
        EffectRefused: the message names every refused effect and what is granted.
    """
    refusals = [
        f"#{index + 1} {reason}"
        for index, effect in enumerate(effects)
        if (reason := effect_refusal(policy, effect, session)) is not None
    ]
    if refusals:
        raise EffectRefused(
            f"{owner} declared effects outside its effect policy; none of its effects "
            f"ran: {'; '.join(refusals)}"
        )


def call_refusal(
    effect: Effect,
    *,
    policy: EffectPolicy,
    session: SessionId | None,
    agents: Collection[AgentId],
    chain: Chain,
    workflows: Container[WorkflowId] | None = None,
) -> str | None:
    """Return what a model is told of an effect-tool call the checks above would refuse.

    None when they would let `effect`, declared by the turn at `chain` of
    `session`, through: inside `policy`, naming an agent in `agents` (a
    delegation or handoff), within the depth limit and closing no cycle, and
    signalling a workflow in `workflows` (None: signals are not checked here).
    """
    reason = effect_refusal(policy, effect, session)
    if reason is not None:
        return f"Refused: {reason}; nothing was done"
    if isinstance(effect, SignalEffect):
        if workflows is None or effect.target in workflows:
            return None
        return f"Error: there is no workflow {effect.target!r} to signal; nothing was done"
    if not isinstance(effect, DelegateEffect | HandoffEffect):
        return None
    if effect.agent not in agents:
        return f"Error: there is no agent {effect.agent!r}; available: {_listed(agents)}"
    try:
        if isinstance(effect, DelegateEffect):
            chain.delegate(effect.agent)
        else:
            chain.handoff(effect.agent)
    except DispatchFailed as exc:
        done = "delegated" if isinstance(effect, DelegateEffect) else "handed off"
        return f"Error: not {done}, {exc}"
    return None


def _history_append(effect: CustomEffect, owner: str) -> None:
    try:
        HistoryAppend.from_effect(effect)
    except ValueError as exc:
        raise DispatchFailed(f"{owner} declared a {exc}") from None


def _known(agent: AgentId, agents: Collection[AgentId], owner: str, verb: str) -> None:
    if agent not in agents:
        raise AgentNotFound(
            agent, f"{owner} {verb} unknown agent {agent!r}; available: {_listed(agents)}"
        )


def _listed(names: Collection[str]) -> str:
    return ", ".join(sorted(names)) or "none"
