"""Checking and carrying out the effects one turn declared.

`EffectRunner.plan` checks everything that can be checked before any
effect happens (agents and workflows named, custom types handled, at most
one handoff, depth and cycles: see `neuron_orch_local.checks`), so a turn
whose effects cannot all run has none of them run. `EffectRunner.run` then
carries them out in declaration order, with two exceptions:

- the memory effects (`write_memory`, `delete_memory`, and the `custom`
  effect `append_history` that records the turn in its session's history,
  see `layer0.history`) are applied together, all or none, at the position
  of the first of them: whatever the turn
  declares after its first write (a delegation, a signal) finds all of its
  writes in place. An effect before them that fails or is cancelled (a
  delegated agent failing, a custom handler's error) has them applied all
  the same before its error goes on: the turn happened, and what it did
  stays in its session's history. A store refusing them with `WriteFailed`
  is asked again within the orchestrator's `RetryPolicy` (all or none makes
  that safe; the turn does not run again). A cancellation waits for them to
  be applied; a second one cuts the application short, which undoes it;
- the handoff is left to the caller, to run after everything else: the turn
  handing off is over, and the next agent must find its effects done (its
  history write above all).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import assert_never

from layer0 import (
    APPEND_HISTORY,
    AgentId,
    CustomEffect,
    DelegateEffect,
    DeleteMemoryEffect,
    DispatchFailed,
    Effect,
    EffectPolicy,
    HandoffEffect,
    HistoryAppend,
    LogEffect,
    SessionId,
    SignalEffect,
    StateStore,
    TurnRecord,
    WriteMemoryEffect,
)

from ._memory import MemoryEffect, StoreAbilities, apply_memory_retrying
from ._table import WorkflowTable
from .chain import Chain
from .checks import check_effects, check_policy, effect_owner
from .custom import CustomEffectHandler, EffectContext
from .log import emit_log
from .retry import Clock, RetryPolicy

__all__ = ["Delegate", "EffectPlan", "EffectRunner"]

Delegate = Callable[[DelegateEffect, Chain], Awaitable[None]]
"""Runs one delegation on the chain checked for it."""


@dataclass(frozen=True, slots=True)
class EffectPlan:
    """One turn's effects, checked, with what running them needs."""

    effects: Sequence[Effect]
    memory: tuple[MemoryEffect, ...]
    chains: Mapping[int, Chain]
    """The chain of each delegation and handoff, by its index in `effects`."""
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
        retry: RetryPolicy,
        clock: Clock,
        randomness: Callable[[], float],
    ) -> None:
        """Run effects on `store` and `workflows`, for turns of `agents`.

        `retry`, `clock` and `randomness` govern asking the store again when it
        refuses a turn's memory effects.
        """
        self._store = store
        self._retry = retry
        self._clock = clock
        self._randomness = randomness
        self._abilities = StoreAbilities.of(store)
        self._workflows = workflows
        self._agents = agents
        self._handlers = handlers

    def plan(
        self,
        effects: Sequence[Effect],
        *,
        context: EffectContext,
        chain: Chain,
        policy: EffectPolicy,
        session: SessionId | None,
    ) -> EffectPlan:
        """Check `effects` of a turn of `session` before any of them runs.

        See `neuron_orch_local.checks`; `policy` is the agent's effect policy.

        Raises:
            EffectRefused: an effect is outside `policy`.
            AgentNotFound: a delegate or handoff names an agent that does not exist.
            WorkflowNotFound: a signal names a workflow that does not exist.
            DispatchFailed: a custom effect type has no handler, the turn
                declared more than one handoff, or a delegation or handoff
                would close a cycle or go past the depth limit.
        """
        check_policy(effects, owner=_owner(context), policy=policy, session=session)
        check_effects(
            effects,
            owner=_owner(context),
            agents=self._agents,
            workflows=self._workflows,
            custom_types=self._handlers.keys(),
            handlers_given_to="LocalOrchestrator",
        )
        chains = chain.follow(effects)
        handoff = next(
            ((e, chains[i]) for i, e in enumerate(effects) if isinstance(e, HandoffEffect)), None
        )
        memory = tuple(_memory(e) for e in effects if _is_memory(e))
        return EffectPlan(effects, memory, chains, handoff)

    async def run(
        self,
        plan: EffectPlan,
        *,
        context: EffectContext,
        delegate: Delegate,
        record: TurnRecord | None = None,
    ) -> bool:
        """Carry out the planned effects in order, except the handoff (see the module doc).

        `record` (the turn's, as if all goes well) is stored with the memory
        effects when the store can do both in one transaction; returns whether it was.
        """
        memory_reached = recorded = False
        try:
            for index, effect in enumerate(plan.effects):
                if isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect) or _is_memory(effect):
                    if not memory_reached:
                        memory_reached = True
                        recorded = await self._apply_memory(plan, context, record)
                elif isinstance(effect, SignalEffect):
                    self._workflows.deliver(effect.target, effect.payload)
                elif isinstance(effect, DelegateEffect):
                    await delegate(effect, plan.chains[index])
                elif isinstance(effect, HandoffEffect):
                    continue
                elif isinstance(effect, LogEffect):
                    emit_log(effect, agent=context.agent, workflow_id=context.workflow_id)
                elif isinstance(effect, CustomEffect):
                    await self._custom(effect, context)
                else:
                    assert_never(effect)
        except BaseException:
            if not memory_reached and plan.memory:
                # Without the record: the caller records the failure.
                await self._apply_memory(plan, context, None)
            raise
        return recorded

    async def _apply_memory(
        self, plan: EffectPlan, context: EffectContext, record: TurnRecord | None
    ) -> bool:
        """Apply the plan's memory effects, which a cancellation waits for.

        The turn happened, so its history goes in rather than being undone
        (all or none). A second cancellation, for a store that does not
        answer, stops the wait: the application is cut short, and undoes what
        it wrote.
        """
        applying = asyncio.ensure_future(self.apply_memory(plan.memory, _owner(context), record))
        try:
            return await asyncio.shield(applying)
        except asyncio.CancelledError:
            await applying  # not shielded: a second cancellation reaches it
            raise

    async def apply_memory(
        self, effects: Sequence[MemoryEffect], owner: str, record: TurnRecord | None = None
    ) -> bool:
        """Apply `effects` all or none, asking again while the store refuses (see the module doc).

        Returns whether `record` was stored with them.

        Raises:
            MemoryNotAppliedError: none was applied.
        """
        return await apply_memory_retrying(
            self._store,
            effects,
            owner=owner,
            policy=self._retry,
            clock=self._clock,
            randomness=self._randomness,
            record=record,
            abilities=self._abilities,
        )

    async def _custom(self, effect: CustomEffect, context: EffectContext) -> None:
        try:
            await self._handlers[effect.effect_type](effect, context)
        except Exception as exc:
            raise DispatchFailed(
                f"the handler of custom effect {effect.effect_type!r} of {_owner(context)} "
                f"failed: {type(exc).__name__}: {exc}"
            ) from exc


def _is_memory(effect: Effect) -> bool:
    return isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect) or (
        isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY
    )


def _memory(effect: Effect) -> MemoryEffect:
    if isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect):
        return effect
    assert isinstance(effect, CustomEffect)
    return HistoryAppend.from_effect(effect)  # checked by `check_effects`


def _owner(context: EffectContext) -> str:
    return effect_owner(context.agent, context.workflow_id)
