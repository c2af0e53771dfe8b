"""The context-strategy contract: deciding when and how to shrink the conversation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .provider import ProviderMessage

__all__ = ["ContextStrategy"]


@runtime_checkable
class ContextStrategy(Protocol):
    """Estimates the size of the conversation and compacts it when it grows too large."""

    def token_estimate(self, messages: Sequence[ProviderMessage]) -> int:
        """Return an estimate of the tokens `messages` take."""
        ...

    def should_compact(self, messages: Sequence[ProviderMessage], limit: int) -> bool:
        """Return whether `messages` should be compacted to stay within `limit` tokens."""
        ...

    async def compact(self, messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
        """Return a smaller conversation that keeps what matters."""
        ...
