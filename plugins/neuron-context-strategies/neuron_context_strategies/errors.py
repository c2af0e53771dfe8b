"""Errors of `neuron_context_strategies`.

    ContextStrategyError (ValueError)   root: a strategy was set up or called wrongly
    ├── BudgetRequiredError            compact() was called without the loop's budget
    └── StrategyOptionError            an option has a value the strategy cannot use

A failed summary call is not among them: the strategy logs it and slides.
"""

from __future__ import annotations

__all__ = ["BudgetRequiredError", "ContextStrategyError", "StrategyOptionError"]


class ContextStrategyError(ValueError):
    """Root of this package's errors."""


class BudgetRequiredError(ContextStrategyError):
    """`compact` was called without a `CompactionBudget`.

    These strategies aim at the limit the loop measured; without it they
    cannot know how far to shrink. `NeuronTurn` always passes one.
    """

    def __init__(self, strategy: str) -> None:
        """Name the strategy that was called without a budget."""
        super().__init__(
            f"context strategy {strategy!r} needs the loop's budget: call "
            "compact(messages, budget=CompactionBudget(...)), as NeuronTurn does"
        )


class StrategyOptionError(ContextStrategyError):
    """An option has a value the strategy cannot use; the message names the option."""
