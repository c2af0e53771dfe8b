"""`ChatLimits`: how much one chat request may carry, since the client is not trusted."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChatLimits"]


@dataclass(frozen=True, slots=True)
class ChatLimits:
    """The most one chat request may carry; past it, the request is refused, naming the limit.

    Why: a browser client is untrusted input, and an unbounded request would hold
    the server's memory and the model's context hostage. The AI SDK sends the
    whole conversation with every request, so the body limit bounds it all.
    """

    max_request_bytes: int = 24 * 1024 * 1024
    """The largest HTTP request body (every message, files as data URLs included)."""
    max_text_chars: int = 1_000_000
    """The most characters of text the new user message (or one tool output, as JSON) may carry."""
    max_parts: int = 64
    """The most parts the new user message may have."""
    max_file_bytes: int = 16 * 1024 * 1024
    """The largest image or PDF one file part may carry, decoded."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) < 1:
                raise ValueError(f"ChatLimits.{name} must be at least 1")
