"""State: the read half a turn is given, and the full store an orchestrator owns."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import JsonValue

from ._scalars import F64
from ._tagged import Frozen
from .history import HistoryAppend
from .ids import SessionId
from .scope import Scope

__all__ = ["HistoryStore", "SearchResult", "SessionEraser", "StateReader", "StateStore"]


class SearchResult(Frozen):
    """One hit of a state search: the key, its score (higher is better), a snippet."""

    key: str
    score: F64
    snippet: str | None = None


@runtime_checkable
class StateReader(Protocol):
    """Read-only access to state; all a turn is ever given."""

    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        """Return the value under `key` in `scope`, or None when there is none."""
        ...

    async def list(self, scope: Scope, prefix: str) -> list[str]:
        """Return the keys in `scope` that start with `prefix`."""
        ...

    # `builtins.list`: inside the class, `list` names the method above.
    async def search(self, scope: Scope, query: str, limit: int) -> builtins.list[SearchResult]:
        """Return up to `limit` keys matching `query`, best first (empty when unsupported)."""
        ...


@runtime_checkable
class StateStore(StateReader, Protocol):
    """Readable and writable state, owned by whoever executes effects."""

    async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
        """Store `value` under `key` in `scope`, replacing any previous value."""
        ...

    async def delete(self, scope: Scope, key: str) -> None:
        """Remove `key` from `scope`; no-op when it is missing."""
        ...


@runtime_checkable
class HistoryStore(StateStore, Protocol):
    """A StateStore that appends to a session's history atomically (see `layer0.history`)."""

    async def append_history(self, append: HistoryAppend) -> int:
        """Append `append.messages` to the session's history in one step; return its new length.

        An append whose `turn_id` the session already holds changes nothing.

        Raises:
            HistoryConflict: `append.expected_length` is set and the history's
                length differs; nothing was appended.
            WriteFailed: the store refused; nothing was appended.
        """
        ...


@runtime_checkable
class SessionEraser(Protocol):
    """A store that deletes whole sessions in one transaction: everything kept of them, or nothing.

    Why: a person asking to be forgotten must not be left half-deleted by a
    failure part-way. Python API only; nothing of it crosses the wire.
    """

    async def forget_sessions(
        self,
        sessions: Sequence[SessionId],
        keys: Sequence[tuple[Scope, str]] = (),
        turns: Sequence[str] = (),
    ) -> int:
        """Delete every key of each session's scope, its turn records and `keys`, all or none.

        `keys` are other keys kept about the sessions (an index of them in
        another scope), deleted in the same transaction. `turns` are the ids
        of turn records kept without a session (those of the runs the
        sessions delegated to without one), deleted in it too; a record
        kept with a session is not deleted by its id here. Search finds none
        of them afterwards. Deleting what is not there is no error, so
        running it again after a failure is safe. `turns` came later:
        callers pass it only when it names some, so an eraser without it
        stays one (and is refused only what it cannot delete).

        Returns how many entries went: keys of the scopes, turn records, and
        those of `keys` and `turns` that were there.

        Raises:
            WriteFailed: the store refused; nothing was deleted.
        """
        ...
