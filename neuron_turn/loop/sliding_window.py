"""The built-in context strategies: `sliding_window` (keep the newest messages) and `none`.

Both estimate tokens as characters / 4 over text and tool JSON, which is
rough but needs no tokenizer, and is the same for every provider.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from .provider import (
    ImagePart,
    ProviderMessage,
    RawPart,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)

__all__ = ["NoCompaction", "SlidingWindow", "estimate_tokens"]

CHARS_PER_TOKEN: Final = 4
"""The characters one token stands for in the estimate."""

IMAGE_TOKENS: Final = 1_000
"""What one image counts for in the estimate, whatever its size."""


def estimate_tokens(messages: Sequence[ProviderMessage]) -> int:
    """Return about how many tokens `messages` take: characters / 4, rounded up."""
    chars = 0
    images = 0
    for message in messages:
        for part in message.content:
            if isinstance(part, ImagePart):
                images += 1
            else:
                chars += _chars(part)
    return -(-chars // CHARS_PER_TOKEN) + images * IMAGE_TOKENS


def _chars(part: TextPart | ToolUsePart | ToolResultPart | ThinkingPart | RawPart) -> int:
    if isinstance(part, TextPart):
        return len(part.text)
    if isinstance(part, ToolUsePart):
        return len(part.name) + len(json.dumps(part.input))
    if isinstance(part, ToolResultPart):
        return len(part.content)
    if isinstance(part, ThinkingPart):
        return len(part.thinking)
    return len(json.dumps(part.data))


class SlidingWindow:
    """Keeps the system message(s) and the newest `max_messages` other messages.

    A tool call and its result are kept or dropped together: an assistant
    message asking for tools and the user message answering them are never
    split, since every model API rejects a tool result whose call is missing.
    So the kept window never starts with a tool result; it may hold fewer
    than `max_messages` for that reason, and one more only when the newest
    message is itself a tool result and `max_messages` is 1.
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

    def should_compact(self, messages: Sequence[ProviderMessage], limit: int) -> bool:
        """Whether the estimate exceeds `limit` (or `max_tokens`) or there are too many messages."""
        if _count_others(messages) > self.max_messages:
            return True
        estimate = estimate_tokens(messages)
        return estimate > limit or (self.max_tokens is not None and estimate > self.max_tokens)

    async def compact(self, messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
        """Return the system message(s) and the newest messages that fit, in their order."""
        others = [i for i, message in enumerate(messages) if message.role != "system"]
        start = max(0, len(others) - self.max_messages)
        start = self._fit_tokens(messages, others, start)
        cut = _clean_start(messages, others, start)
        return [m for i, m in enumerate(messages) if m.role == "system" or i >= cut]

    def _fit_tokens(
        self, messages: Sequence[ProviderMessage], others: list[int], start: int
    ) -> int:
        """Move `start` forward until the kept messages fit `max_tokens` (keeping at least one)."""
        if self.max_tokens is None:
            return start
        fixed = estimate_tokens([m for m in messages if m.role == "system"])
        sizes = [estimate_tokens([messages[i]]) for i in others]
        total = fixed + sum(sizes[start:])
        while total > self.max_tokens and start < len(others) - 1:
            total -= sizes[start]
            start += 1
        return start


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


def _clean_start(messages: Sequence[ProviderMessage], others: list[int], start: int) -> int:
    """Return the index in `messages` where the window starts, past any tool results.

    A window starting at a tool result would orphan it, so the result goes
    with its call; if that would drop everything, the call comes in instead.
    """
    if start >= len(others):
        return len(messages)
    clean = start
    while clean < len(others) and _has_tool_result(messages[others[clean]]):
        clean += 1
    if clean < len(others):
        return others[clean]
    # Only tool results remain: take in the calls before them, so the newest
    # exchange survives (the loop's next model call needs it).
    while start > 0 and _has_tool_result(messages[others[start]]):
        start -= 1
    return others[start]


def _has_tool_result(message: ProviderMessage) -> bool:
    return any(isinstance(part, ToolResultPart) for part in message.content)
