"""`RunLimits`: how much one AG-UI request may carry, since the client is not trusted."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunLimits"]


@dataclass(frozen=True, slots=True)
class RunLimits:
    """The most one run request may carry; past it, the run is refused, naming the limit.

    Why: a browser client is untrusted input, and an unbounded request would hold
    the server's memory and the model's context hostage.
    """

    max_request_bytes: int = 24 * 1024 * 1024
    """The largest HTTP request body (the whole `RunAgentInput`, images in base64 included)."""
    max_text_chars: int = 1_000_000
    """The most characters of text the new user message (or one tool result) may carry."""
    max_parts: int = 64
    """The most content parts the new user message may have."""
    max_file_bytes: int = 16 * 1024 * 1024
    """The largest image or PDF one part may carry, decoded."""
    max_tools: int = 128
    """The most frontend tools one run may declare."""
    max_state_bytes: int = 1024 * 1024
    """The largest shared `state` (as JSON) and, apart, the largest `context` a run may carry."""
    max_state_depth: int = 64
    """The deepest a run's `state` may nest (the layer0 wire reads JSON to 128 levels)."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) < 1:
                raise ValueError(f"RunLimits.{name} must be at least 1")
