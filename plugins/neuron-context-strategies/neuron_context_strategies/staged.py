"""`Staged`: a context strategy made of steps tried in order, then a slide as the last resort.

Each step (`CompactionStep`) shrinks the conversation as far as it can by
its own means, clearing tool results or summarising, without promising to
fit. `Staged` runs the steps in order and stops at the first result that
fits the budget; if none does, it clears any tool result larger than the
whole budget (newest or not: no request holding it can fit, and keeping it
would leave the provider refusing every call), then drops the oldest
exchanges as `sliding_window` does. So every strategy built this way brings
the context under the limit that triggered it (unless the system, pinned and
newest messages alone exceed it), keeps tool calls with their results, and
keeps pinned messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from neuron_turn import ProviderMessage
from neuron_turn.loop.cleared_results import without_oversized
from neuron_turn.loop.context import CompactionBudget
from neuron_turn.loop.sliding_window import slide
from neuron_turn.loop.tokens import estimate_tokens

from .errors import BudgetRequiredError

__all__ = ["CompactionStep", "Staged"]


@runtime_checkable
class CompactionStep(Protocol):
    """One way to shrink a conversation; `Staged` strategies are made of these."""

    async def reduce(
        self, messages: Sequence[ProviderMessage], budget: CompactionBudget
    ) -> list[ProviderMessage]:
        """Return `messages` made smaller toward `budget.limit` (not necessarily under it).

        Must keep every tool call with its results, and every pinned message.
        """
        ...


class Staged:
    """Runs `steps` in order until the conversation fits, clears what never fits, then slides."""

    name: str = "staged"
    """The name compaction events carry."""

    def __init__(self, steps: Sequence[CompactionStep], *, name: str | None = None) -> None:
        """Try `steps` in this order; `name` is what events call the strategy."""
        self.steps = tuple(steps)
        if name is not None:
            self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(steps={list(self.steps)!r})"

    def token_estimate(self, messages: Sequence[ProviderMessage]) -> int:
        """Return about how many tokens `messages` take (characters / 4)."""
        return estimate_tokens(messages)

    def should_compact(
        self, messages: Sequence[ProviderMessage], limit: int, *, used: int | None = None
    ) -> bool:
        """Whether the loop's measure (or, without it, the estimate) exceeds `limit`."""
        return (estimate_tokens(messages) if used is None else used) > limit

    async def compact(
        self, messages: Sequence[ProviderMessage], *, budget: CompactionBudget | None = None
    ) -> list[ProviderMessage]:
        """Return the conversation shrunk by the first steps that make it fit `budget.limit`.

        Raises:
            BudgetRequiredError: no budget was given (the loop always gives one).
        """
        if budget is None:
            raise BudgetRequiredError(self.name)
        current = list(messages)
        for step in self.steps:
            if budget.count(current) <= budget.limit:
                return current
            current = await step.reduce(current, budget)
        current = without_oversized(current, limit=budget.limit, count=budget.count)
        if budget.count(current) <= budget.limit:
            return current
        return slide(current, max_messages=None, limit=budget.limit, count=budget.count)
