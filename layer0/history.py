"""`HistoryAppend`: a turn's new messages, appended to its session's history atomically.

A session's history is the JSON list under the key `messages` (`HISTORY_KEY`)
in its session scope. A turn does not write that list whole, which would
lose the messages of any turn that ran on the same session in between (last
writer wins); it declares the messages it added, and the orchestrator
appends them to the latest history in one step. Each turn's messages (its
user message, then its own assistant and tool messages) therefore stay
contiguous, and concurrent turns on one session keep all of theirs.

The wire form is one the Rust reference already carries, a `custom` effect:

    {"type": "custom", "effect_type": "append_history",
     "data": {"expected_length": null, "messages": [...],
              "session": "<id>", "turn_id": "<unique id>"}}

- `turn_id` makes the append idempotent: a store that has already appended
  that id for the session does nothing (a retried effect appends once).
- `expected_length`, when set, is the length of the history the turn read:
  the append fails with `HistoryConflict` instead if the history has changed
  since (another run appended in between). Callers ask for it when two runs
  on one session must not interleave.
"""

from __future__ import annotations

from typing import ClassVar, Final

from pydantic import Field

from ._payload import EffectPayload
from ._scalars import U32
from .ids import SessionId
from .json_value import Json
from .scope import SessionScope

__all__ = ["APPEND_HISTORY", "HISTORY_KEY", "HistoryAppend"]

HISTORY_KEY: Final = "messages"
"""The key, in a session's scope, that holds the conversation history (a JSON list)."""

APPEND_HISTORY: Final = "append_history"
"""The `effect_type` of the custom effect that appends to a session's history."""


class HistoryAppend(EffectPayload):
    """The data of an `append_history` custom effect (see the module doc)."""

    EFFECT_TYPE: ClassVar[str] = APPEND_HISTORY

    expected_length: U32 | None = None
    """Fail instead of appending unless the history holds exactly this many messages."""
    messages: list[Json] = Field(min_length=1)
    """The messages to append, in order (the turn's user message first)."""
    session: SessionId
    """The session whose history grows."""
    turn_id: str = Field(min_length=1)
    """Unique per turn: the same id is appended at most once."""

    @property
    def scope(self) -> SessionScope:
        """The scope holding the history."""
        return SessionScope(id=self.session)
