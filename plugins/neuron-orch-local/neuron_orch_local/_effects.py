"""Checking and carrying out the effects one turn declared.

`EffectRunner.plan` checks everything that can be checked before any
effect happens (agents and workflows named, custom types handled, depth and
cycles, at most one handoff), so a turn whose effects cannot all run has
none of them run. `EffectRunner.run` then carries them out in declaration
order, with two exceptions:

- the memory effects (`write_memory`, `delete_memory`) are applied together,
  all or none, at the position of the first of them: whatever the turn
  declares after its first write (a delegation, a signal) finds all of its
  writes in place;
- the handoff is left to the caller, to run after everything else: the turn
  handing off is over, and the next agent must find its effects done (its
  history write above all).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import assert_never

from layer0 import (
    AgentId,
    AgentNotFound,
    CustomEffect,
    DelegateEffect,
    DeleteMemoryEffect,
    DispatchFailed,
    Effect,
    HandoffEffect,
    LogEffect,
    SignalEffect,
    StateStore,
    WorkflowNotFound,
    WriteMemoryEffect,
)

from ._chain import Chain
from ._log import emit_log
from ._memory import MemoryEffect, apply_memory
from ._table import WorkflowTable
from .custom import CustomEffectHandler, EffectContext

__all__ = ["Delegate", "EffectPlan", "EffectRunner"]

Delegate = Callable[[DelegateEffect, Chain], Awaitable[None]]
"""Runs one delegation on the chain checked for it."""


@dataclass(frozen=True, slots=True)
class EffectPlan:
    """One turn's effects, checked, with what running them needs."""

    effects: Sequence[Effect]
    memory: tuple[MemoryEffect, ...]
    delegations: Mapping[int, Chain]
    """The chain of each delegation, by its index in `effects`."""
    handoff: tuple[HandoffEffect, Chain] | None


class EffectRunner:
    """Checks and runs turns' effects against one store, workflow table and set of handlers."""

    def __init__(
        self,
        *,
        store: StateStore,
        workflows: WorkflowTable,
        agents: Collection[AgentId],
        handlers: Mapping[str, CustomEffectHandler],
    ) -> None:
        """Run effects on `store` and `workflows`, for turns of `agents`."""
        self._store = store
        self._workflows = workflows
        self._agents = agents
        self._handlers = handlers

    def plan(
        self, effects: Sequence[Effect], *, context: EffectContext, chain: Chain
    ) -> EffectPlan:
        """Check `effects` before any of them runs.

        Raises:
            AgentNotFound: a delegate or handoff names an agent that does not exist.
            WorkflowNotFound: a signal names a workflow that does not exist.
            DispatchFailed: a custom effect type has no handler, a delegation
                would close a cycle or go past the depth limit, or the turn
                declared more than one handoff.
        """
        delegations: dict[int, Chain] = {}
        handoffs: list[tuple[HandoffEffect, Chain]] = []
        for index, effect in enumerate(effects):
            if isinstance(effect, DelegateEffect):
                self._known(effect.agent, context, "delegates to")
                delegations[index] = chain.delegate(effect.agent)
            elif isinstance(effect, HandoffEffect):
                self._known(effect.agent, context, "hands off to")
                handoffs.append((effect, chain.handoff(effect.agent)))
            elif isinstance(effect, SignalEffect) and effect.target not in self._workflows:
                raise WorkflowNotFound(
                    effect.target,
                    f"{_owner(context)} signals workflow {effect.target!r}, which does not exist",
                )
            elif isinstance(effect, CustomEffect):
                self._handler(effect, context)
        if len(handoffs) > 1:
            targets = ", ".join(repr(effect.agent) for effect, _ in handoffs)
            raise DispatchFailed(
                f"{_owner(context)} declared {len(handoffs)} handoffs (to {targets}); "
                "a turn can hand the conversation to one agent only"
            )
        memory = tuple(e for e in effects if isinstance(e, WriteMemoryEffect | DeleteMemoryEffect))
        return EffectPlan(effects, memory, delegations, handoffs[0] if handoffs else None)

    async def run(self, plan: EffectPlan, *, context: EffectContext, delegate: Delegate) -> None:
        """Carry out the planned effects in order, except the handoff (see the module doc)."""
        memory_applied = False
        for index, effect in enumerate(plan.effects):
            if isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect):
                if not memory_applied:
                    await apply_memory(self._store, plan.memory, owner=_owner(context))
                    memory_applied = True
            elif isinstance(effect, SignalEffect):
                self._workflows.deliver(effect.target, effect.payload)
            elif isinstance(effect, DelegateEffect):
                await delegate(effect, plan.delegations[index])
            elif isinstance(effect, HandoffEffect):
                continue
            elif isinstance(effect, LogEffect):
                emit_log(effect, agent=context.agent, workflow_id=context.workflow_id)
            elif isinstance(effect, CustomEffect):
                await self._custom(effect, context)
            else:
                assert_never(effect)

    def _known(self, agent: AgentId, context: EffectContext, verb: str) -> None:
        if agent not in self._agents:
            raise AgentNotFound(
                agent,
                f"{_owner(context)} {verb} unknown agent {agent!r}; "
                f"available: {', '.join(sorted(self._agents)) or 'none'}",
            )

    def _handler(self, effect: CustomEffect, context: EffectContext) -> CustomEffectHandler:
        try:
            return self._handlers[effect.effect_type]
        except KeyError:
            registered = ", ".join(sorted(self._handlers)) or "none"
            raise DispatchFailed(
                f"{_owner(context)} declared a custom effect of type {effect.effect_type!r}, "
                f"which has no handler; registered types: {registered} "
                "(give LocalOrchestrator custom_handlers={effect_type: handler})"
            ) from None

    async def _custom(self, effect: CustomEffect, context: EffectContext) -> None:
        handler = self._handler(effect, context)
        try:
            await handler(effect, context)
        except Exception as exc:
            raise DispatchFailed(
                f"the handler of custom effect {effect.effect_type!r} of {_owner(context)} "
                f"failed: {type(exc).__name__}: {exc}"
            ) from exc


def _owner(context: EffectContext) -> str:
    return f"agent {context.agent!r} (workflow {context.workflow_id})"
