"""The operations of a state store's write batch that every store makes alike.

For state store plugins (`neuron-state-sqlite`, `neuron-state-postgres`): a
history append and a turn record become these, serialized in the caller's task
(later changes to the caller's objects cannot leak in, and a value that is not
JSON is refused before the database is touched), and a delete is one, as is
forgetting whole sessions. A store adds its own kind of write (each keeps what
its search index needs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from layer0 import HISTORY_KEY, HistoryAppend, Scope, SessionId, SessionScope, TurnRecord

from .stored_values import encode_value, scope_key

__all__ = ["Append", "Forget", "PutTurn", "Remove", "append_op", "forget_op", "turn_op"]


@dataclass(frozen=True, slots=True)
class Remove:
    """Delete `key` if it is there."""

    scope: str
    key: str


@dataclass(frozen=True, slots=True)
class Append:
    """Append `count` items (`items`, a JSON array's text) to the list under `key`.

    Once per `append_id`; when `expected_length` is set, only if the list
    holds exactly that many items (else `HistoryConflict` naming `session`).
    """

    scope: str
    key: str
    append_id: str
    items: str
    count: int
    expected_length: int | None
    session: str


@dataclass(frozen=True, slots=True)
class PutTurn:
    """Store a turn record (its JSON, and its summary's), replacing the one with its id."""

    turn_id: str
    session: str | None
    started: str
    summary: str
    record: str


@dataclass(frozen=True, slots=True)
class Forget:
    """Delete whole sessions: their scopes' keys, their turn records, and other `keys`.

    What `layer0.SessionEraser.forget_sessions` deletes; its answer is how many
    entries went (a scope's appends belong to its keys, so are not counted).
    """

    scopes: tuple[str, ...]
    """The sessions' scopes, as stored (`scope_key`)."""
    sessions: tuple[str, ...]
    keys: tuple[tuple[str, str], ...]
    """Other `(scope, key)` pairs, as stored."""
    turns: tuple[str, ...] = ()
    """Ids of turn records kept without a session; one kept with a session stays."""


def forget_op(
    sessions: Sequence[SessionId],
    keys: Sequence[tuple[Scope, str]],
    turns: Sequence[str] = (),
) -> Forget:
    """Forgetting `sessions`, `keys` and sessionless records `turns` as an operation."""
    return Forget(
        scopes=tuple(scope_key(SessionScope(id=session)) for session in sessions),
        sessions=tuple(sessions),
        keys=tuple((scope_key(scope), key) for scope, key in keys),
        turns=tuple(turns),
    )


def append_op(append: HistoryAppend) -> Append:
    """The history append `append` as an operation, its messages serialized now.

    Raises:
        SerializationError: a message is not JSON that reads back equal.
    """
    scope = scope_key(append.scope)
    return Append(
        scope=scope,
        key=HISTORY_KEY,
        append_id=append.turn_id,
        items=encode_value(append.messages, scope=scope, key=HISTORY_KEY),
        count=len(append.messages),
        expected_length=append.expected_length,
        session=append.session,
    )


def turn_op(record: TurnRecord) -> PutTurn:
    """The turn record `record` as an operation, serialized now."""
    return PutTurn(
        turn_id=record.turn_id,
        session=record.session,
        started=record.started,
        summary=record.summary().model_dump_json(),
        record=record.model_dump_json(),
    )
