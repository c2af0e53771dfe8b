"""The built-in context strategies: `sliding_window` (keep the newest messages) and `none`.

Both estimate tokens as characters / 4 over text and tool JSON (see
`neuron_turn.loop.tokens`); given the loop's `CompactionBudget`,
`sliding_window` counts with its calibrated count and fits its limit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .cleared_results import without_oversized
from .context import CompactionBudget
from .exchanges import exchanges, starts_with_user
from .provider import ProviderMessage
from .tokens import CHARS_PER_TOKEN, IMAGE_TOKENS, estimate_tokens

__all__ = ["CHARS_PER_TOKEN", "IMAGE_TOKENS", "NoCompaction", "SlidingWindow", "estimate_tokens"]


class SlidingWindow:
    """Keeps the system message(s), pinned messages and the newest messages that fit.

    At most `max_messages` other messages are kept and, when set, about
    `max_tokens`; given a `CompactionBudget`, the kept messages also fit its
    `limit`, so compaction brings the context under the limit that triggered
    it. A tool call and its results are kept or dropped together (every model
    API rejects a result whose call is missing), and the newest exchange is
    always kept; when it alone is larger, each of its tool results larger
    than the whole limit is cleared to a placeholder naming its size (its call
    kept), since sent whole it would fail every request. When the kept messages would
    open with the assistant, a one-line note from the user goes first, since
    Anthropic rejects a conversation that does not start with the user; the
    note does not count toward `max_messages`.
    """

    def __init__(self, *, max_messages: int = 50, max_tokens: int | None = None) -> None:
        """Keep at most `max_messages` non-system messages and, if set, about `max_tokens`.

        Raises:
            ValueError: `max_messages` or `max_tokens` is less than 1.
        """
        if max_messages < 1:
            raise ValueError(f"max_messages must be at least 1; got {max_messages}")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1; got {max_tokens}")
        self.max_messages = max_messages
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"SlidingWindow(max_messages={self.max_messages}, max_tokens={self.max_tokens})"

    def token_estimate(self, messages: Sequence[ProviderMessage]) -> int:
        """Return about how many tokens `messages` take (characters / 4)."""
        return estimate_tokens(messages)

    def should_compact(
        self, messages: Sequence[ProviderMessage], limit: int, *, used: int | None = None
    ) -> bool:
        """Whether there are too many messages, or the tokens exceed `limit` (or `max_tokens`).

        `used` is the loop's measure of the whole request; without it, the estimate.
        """
        if _count_others(messages) > self.max_messages:
            return True
        estimate = estimate_tokens(messages)
        if self.max_tokens is not None and estimate > self.max_tokens:
            return True
        return (estimate if used is None else used) > limit

    async def compact(
        self, messages: Sequence[ProviderMessage], *, budget: CompactionBudget | None = None
    ) -> list[ProviderMessage]:
        """Return the system and pinned messages and the newest that fit, in their order."""
        limit = self.max_tokens
        count: Callable[[Sequence[ProviderMessage]], int] = estimate_tokens
        if budget is not None:
            limit = budget.limit if limit is None else min(limit, budget.limit)
            count = budget.count
        kept = slide(messages, max_messages=self.max_messages, limit=limit, count=count)
        if limit is None or count(kept) <= limit:
            return kept
        cleared = without_oversized(messages, limit=limit, count=count)
        return slide(cleared, max_messages=self.max_messages, limit=limit, count=count)


def slide(
    messages: Sequence[ProviderMessage],
    *,
    max_messages: int | None,
    limit: int | None,
    count: Callable[[Sequence[ProviderMessage]], int],
) -> list[ProviderMessage]:
    """Keep system and pinned messages and the newest exchanges within both bounds.

    The newest exchange is always kept. Returns the messages in their order,
    behind a note when the kept ones would open with the assistant.
    """
    spans = exchanges(messages)
    keep = [False] * len(spans)
    for n, span in enumerate(spans):
        keep[n] = any(messages[i].role == "system" or messages[i].pinned for i in span)
    fixed = [messages[i] for n, span in enumerate(spans) if keep[n] for i in span]
    tokens = count(fixed) if limit is not None else 0
    others = sum(1 for m in fixed if m.role != "system")
    last = len(spans) - 1
    for n in range(last, -1, -1):
        if keep[n]:
            continue
        chunk = [messages[i] for i in spans[n]]
        size = count(chunk) if limit is not None else 0
        over = (max_messages is not None and others + len(chunk) > max_messages) or (
            limit is not None and tokens + size > limit
        )
        if over and n != last:
            break
        keep[n] = True
        tokens += size
        others += len(chunk)
    kept = [messages[i] for n, span in enumerate(spans) if keep[n] for i in span]
    if len(kept) == len(messages):
        return kept
    return starts_with_user(kept)


class NoCompaction:
    """Never compacts: for short turns, or when the provider manages its own context."""

    def __repr__(self) -> str:
        return "NoCompaction()"

    def token_estimate(self, messages: Sequence[ProviderMessage]) -> int:
        """Return about how many tokens `messages` take (characters / 4)."""
        return estimate_tokens(messages)

    def should_compact(self, messages: Sequence[ProviderMessage], limit: int) -> bool:
        """Never: this strategy keeps everything."""
        return False

    async def compact(self, messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
        """Return `messages` unchanged."""
        return list(messages)


def _count_others(messages: Sequence[ProviderMessage]) -> int:
    return sum(1 for message in messages if message.role != "system")
