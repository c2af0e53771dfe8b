"""`StreamBackoff`: how `MCPClient` reopens a change stream that ended, as a setting of its own.

`MCPClient(reopen_streams=StreamBackoff(...))` chooses it; `reopen_streams=None`
reopens nothing. Its values are checked as it is made, so that a bad one fails
where it is written rather than when a stream first ends, minutes later.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

# The pause doubles on each attempt; its exponent is bounded so that a long run
# of attempts cannot overflow a float.
_FACTOR: Final = 2.0
_MOST_DOUBLINGS: Final = 64
_SECONDS: Final = ("first", "most", "settle")


@dataclass(frozen=True)
class StreamBackoff:
    """How a change stream (MCP 2026-07-28) that ended is reopened: each pause, and how many.

    Attempt n (from 0) waits `first * 2**n` seconds, at most `most`; after
    `attempts` in a row that did not leave the stream open for `settle` seconds
    the stream is given up, so a server that ends each stream as soon as it is
    reopened is given up too rather than reopened forever. A stream that stayed
    open that long has all its attempts again when it next ends. The default
    (0.5 s doubling to 30 s, ten attempts, settled after 30 s) tries for about
    two and a half minutes.

    Raises:
        ValueError: `first` is not a positive, finite number of seconds, `most`
            not a finite one at least `first`, `attempts` not a whole number of
            at least 1 (`MCPClient(reopen_streams=None)` reopens nothing), or
            `settle` negative (infinite: the attempts are never had again).
        TypeError: A value is not a number (a bool is not one here).
    """

    first: float = 0.5
    """Seconds before the first attempt."""
    most: float = 30.0
    """The longest pause, in seconds, however many attempts failed."""
    attempts: int = 10
    """How many attempts in a row before the stream is given up."""
    settle: float = 30.0
    """Seconds a reopened stream must stay open for its next end to count as new trouble."""

    def __post_init__(self) -> None:
        first, most, settle = (_seconds(name, getattr(self, name)) for name in _SECONDS)
        if not 0 < first < math.inf:
            raise ValueError(_wrong("first", self.first, "a positive, finite number of seconds"))
        if not first <= most < math.inf:
            wanted = f"a finite number of seconds, at least first ({self.first!r})"
            raise ValueError(_wrong("most", self.most, wanted))
        if not settle >= 0:  # NaN included
            raise ValueError(_wrong("settle", self.settle, "a number of seconds, at least 0"))
        attempts = self.attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int):
            raise TypeError(_wrong("attempts", attempts, "a whole number"))
        if attempts < 1:
            never = "MCPClient(reopen_streams=None) reopens nothing"
            raise ValueError(_wrong("attempts", attempts, f"at least 1 ({never})"))

    def pause(self, attempt: int) -> float:
        """Seconds to wait before attempt number `attempt` (from 0)."""
        return min(self.most, self.first * _FACTOR ** min(attempt, _MOST_DOUBLINGS))


def _seconds(name: str, value: object) -> float:
    """`value` as seconds; a `TypeError` naming `name` if it is no number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(_wrong(name, value, "a number of seconds"))
    return float(value)


def _wrong(name: str, value: object, wanted: str) -> str:
    return f"StreamBackoff: {name} must be {wanted}, got {value!r}"


DEFAULT_STREAM_BACKOFF: Final = StreamBackoff()
"""What `MCPClient` reopens its change streams with unless told otherwise."""
