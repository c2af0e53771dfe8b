"""The context-strategy contract: deciding when and how to shrink the conversation.

The contract grew by optional keyword arguments only, the way pluggy hook
specs grow: the loop passes `used=` to `should_compact` and `budget=` to
`compact` only when the strategy's method declares them, so a strategy
written against the first contract keeps working unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .provider import Provider, ProviderMessage

__all__ = ["CompactionBudget", "ContextStrategy", "accepts_keyword"]


@dataclass(frozen=True, slots=True)
class CompactionBudget:
    """What a compaction must achieve, and what it may use to get there.

    Given to `compact(messages, budget=...)` by the loop when the context
    passed its limit. Why: the loop knows the model's real context size and
    its calibrated token count; a strategy on its own would only guess.
    """

    limit: int
    """Most tokens (by `count`) the compacted messages may take: the model's context
    limit less the system prompt, the tool schemas and room for the answer, times
    the configured `compact_to` fraction."""
    tokens: int
    """What the messages take now, by the loop's measure."""
    count: Callable[[Sequence[ProviderMessage]], int]
    """Counts messages in this model's tokens (the estimate, calibrated by reports)."""
    provider: Provider
    """The turn's provider, for strategies that ask a model (a summary); its calls are
    counted in the turn's tokens and cost and reported as `CostIncurred`."""
    model: str
    """The model the turn talks to."""
    account: Callable[[Provider], Provider] = lambda provider: provider
    """Wraps another provider (a cheaper summariser, say) so its calls are counted and
    reported like the turn's own."""


@runtime_checkable
class ContextStrategy(Protocol):
    """Estimates the size of the conversation and compacts it when it grows too large.

    Two optional keyword arguments, passed only to methods that declare them:
    `should_compact(messages, limit, *, used=None)` gets the loop's measured
    token count of the whole request (reported by the provider, plus an
    estimate of what was added since), to compare with `limit`;
    `compact(messages, *, budget=None)` gets a `CompactionBudget`, whose
    `limit` the result must fit. Either way, a compacted conversation must
    keep every tool call with its result, and keep pinned messages
    (`ProviderMessage.pinned`).
    """

    def token_estimate(self, messages: Sequence[ProviderMessage]) -> int:
        """Return an estimate of the tokens `messages` take."""
        ...

    def should_compact(self, messages: Sequence[ProviderMessage], limit: int) -> bool:
        """Return whether `messages` should be compacted to stay within `limit` tokens."""
        ...

    async def compact(self, messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
        """Return a smaller conversation that keeps what matters."""
        ...


def accepts_keyword(method: Callable[..., object], name: str) -> bool:
    """Return whether `method` takes the keyword argument `name` (or any keyword)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        (p.name == name and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        or p.kind is p.VAR_KEYWORD
        for p in parameters
    )
