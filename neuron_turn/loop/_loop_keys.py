"""The session-scope keys the loop keeps for itself, which no tool may read or change.

A model that could write them could rewrite its conversation, approve its
own calls, or reset its own circuit breaker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from layer0 import HISTORY_KEY, Scope, SessionScope

from .continuation import KEPT_COUNTS_KEY
from .paused_options import PAUSED_OPTIONS_KEY
from .standing import STANDING_KEY

_HELD: Final[Mapping[str, str]] = {
    HISTORY_KEY: "its conversation history",
    STANDING_KEY: "a person's standing decisions",
    KEPT_COUNTS_KEY: "the counts of a turn kept in part",
    PAUSED_OPTIONS_KEY: "the options a turn paused for approval keeps for its resume",
}


def kept_by_loop(scope: Scope, key: str) -> str | None:
    """What `key` of `scope` holds when the loop keeps it (None: memory, open to tools)."""
    return _HELD.get(key) if isinstance(scope, SessionScope) else None
