"""`MessageLimits`: how much one A2A request may carry, since the remote is not trusted."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MessageLimits"]


@dataclass(frozen=True, slots=True)
class MessageLimits:
    """The most one request may carry; past it, the request is refused, naming the limit.

    Why: a remote agent is untrusted input, and an unbounded message would hold the
    server's memory and the model's context hostage.
    """

    max_request_bytes: int = 24 * 1024 * 1024
    """The largest HTTP request body (JSON, files in base64 included)."""
    max_parts: int = 64
    """The most parts one message may have."""
    max_text_chars: int = 1_000_000
    """The most characters of text one message may carry (its text and data parts together)."""
    max_file_bytes: int = 16 * 1024 * 1024
    """The largest file (image or PDF) one part may carry, decoded."""

    def __post_init__(self) -> None:
        for name in ("max_request_bytes", "max_parts", "max_text_chars", "max_file_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"MessageLimits.{name} must be at least 1")
