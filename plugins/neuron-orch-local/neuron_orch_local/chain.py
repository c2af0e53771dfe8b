"""`Chain`: where a dispatch sits in its tree of delegations and handoffs.

It enforces the depth limit and refuses delegation cycles, before anything
of the step that would break them happens. Checking is pure, so an
orchestrator whose workflows must be deterministic (neuron-orch-temporal's)
checks the same way; a chain is a frozen pydantic model so that it can
travel in such a workflow's input, as `{steps, waiting, depth, max_depth}`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from layer0 import AgentId, DelegateEffect, DispatchFailed, Effect, HandoffEffect

__all__ = ["Chain"]


class Chain(BaseModel):
    """The route from the root dispatch to the current agent.

    `waiting` holds the agents still waiting on a result: each delegating
    agent and the current one. A handoff replaces the current agent (the one
    handing off is done), so A handing off to B and B back to A is no cycle;
    A delegating to B delegating to A is, since A would wait on itself.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    steps: tuple[str, ...]
    """The route as text, root first: agent names, handoffs marked."""
    waiting: tuple[AgentId, ...]
    depth: int
    max_depth: int

    @classmethod
    def root(cls, agent: AgentId, *, max_depth: int) -> Chain:
        """Return the chain of a dispatch made by a caller, at depth 0."""
        return cls(steps=(agent,), waiting=(agent,), depth=0, max_depth=max_depth)

    def delegate(self, agent: AgentId) -> Chain:
        """Return the chain of `agent` delegated to by the current agent.

        Raises:
            DispatchFailed: `agent` is already waiting on this chain, or the
                chain would be deeper than `max_depth`.
        """
        if agent in self.waiting:
            start = self.waiting.index(agent)
            cycle = " -> ".join((*self.waiting[start:], agent))
            raise DispatchFailed(
                f"delegation cycle: {cycle} (agent {self.waiting[-1]!r} delegates to "
                f"{agent!r}, which is waiting on this chain); route: {self.route(agent)}"
            )
        return self._deeper(agent, agent, (*self.waiting, agent))

    def handoff(self, agent: AgentId) -> Chain:
        """Return the chain of `agent` taking over from the current agent.

        Raises:
            DispatchFailed: the chain would be deeper than `max_depth`.
        """
        return self._deeper(agent, f"{agent} (handoff)", (*self.waiting[:-1], agent))

    def follow(self, effects: Sequence[Effect]) -> dict[int, Chain]:
        """Return the chain of each delegation and handoff in `effects`, by the effect's index.

        The current agent's turn declared `effects`; checking all of them
        before any runs means a turn that would break a limit does nothing.

        Raises:
            DispatchFailed: the first delegation or handoff, in effect order,
                that would close a cycle or go past `max_depth`.
        """
        chains: dict[int, Chain] = {}
        for index, effect in enumerate(effects):
            if isinstance(effect, DelegateEffect):
                chains[index] = self.delegate(effect.agent)
            elif isinstance(effect, HandoffEffect):
                chains[index] = self.handoff(effect.agent)
        return chains

    def route(self, then: str | None = None) -> str:
        """Return the route as `a -> b -> c (handoff)`, with `then` appended if given."""
        return " -> ".join(self.steps if then is None else (*self.steps, then))

    def _deeper(self, agent: AgentId, step: str, waiting: tuple[AgentId, ...]) -> Chain:
        if self.depth + 1 > self.max_depth:
            raise DispatchFailed(
                f"dispatch chain too deep: {agent!r} would be at depth {self.depth + 1}, "
                f"max_depth is {self.max_depth}; route: {self.route(step)}"
            )
        return Chain(
            steps=(*self.steps, step),
            waiting=waiting,
            depth=self.depth + 1,
            max_depth=self.max_depth,
        )
