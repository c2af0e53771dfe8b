"""Test helpers for code built on layer0: a trivial Turn, an in-memory store, a recording hook.

They implement the layer0 Protocols completely, so an orchestrator or a hook
pipeline can be tested without a model, a database or a network.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Iterable, Sequence, Set

from pydantic import JsonValue, TypeAdapter

from .errors import HistoryConflict, WriteFailed
from .history import HISTORY_KEY, HistoryAppend
from .hook import Continue, HookAction, HookContext, HookPoint
from .ids import SessionId
from .metadata import TurnMetadata
from .scope import Scope, SessionScope
from .state import SearchResult
from .turn_input import TurnInput
from .turn_output import TurnOutput

__all__ = ["EchoTurn", "InMemoryStore", "RecordingHook"]

_SCOPE = TypeAdapter[Scope](Scope)


class EchoTurn:
    """A Turn that answers with its input message and exits `complete`."""

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Return `input.message` as the answer, with zero usage and no effects."""
        return TurnOutput(
            message=input.message, exit_reason="complete", metadata=TurnMetadata.zero()
        )


class InMemoryStore:
    """A complete StateStore in a dict: read, write, delete, list by prefix, substring search.

    It is a `HistoryStore` and a `SessionEraser` too.

    Values are deep-copied in and out, so a caller mutating what it wrote or
    read cannot change what is stored, as with a real store.
    """

    def __init__(self) -> None:
        """Create an empty store."""
        self._data: dict[tuple[str, str], JsonValue] = {}
        self._appended: set[tuple[str, str]] = set()

    @staticmethod
    def _scope_key(scope: Scope) -> str:
        return _SCOPE.dump_json(scope).decode()

    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        """Return the value under `key` in `scope`, or None."""
        return copy.deepcopy(self._data.get((self._scope_key(scope), key)))

    async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
        """Store a copy of `value` under `key` in `scope`."""
        self._data[(self._scope_key(scope), key)] = copy.deepcopy(value)

    async def delete(self, scope: Scope, key: str) -> None:
        """Remove `key` from `scope`; no-op when missing."""
        self._data.pop((self._scope_key(scope), key), None)

    async def append_history(self, append: HistoryAppend) -> int:
        """Append to the session's history at once, once per turn id (a `HistoryStore`).

        Raises:
            HistoryConflict: `expected_length` is set and differs from the history's length.
            WriteFailed: the stored history is not a list.
        """
        slot = (self._scope_key(append.scope), HISTORY_KEY)
        history = self._data.get(slot, [])
        if not isinstance(history, builtins.list):
            raise WriteFailed(f"the history of session {append.session!r} is not a list")
        if (slot[0], append.turn_id) in self._appended:
            return len(history)
        if append.expected_length is not None and append.expected_length != len(history):
            raise HistoryConflict(
                append.session, expected=append.expected_length, found=len(history)
            )
        # No await between the check and the write: one step for every task on the loop.
        self._data[slot] = [*history, *copy.deepcopy(append.messages)]
        self._appended.add((slot[0], append.turn_id))
        return len(history) + len(append.messages)

    async def forget_sessions(
        self,
        sessions: Sequence[SessionId],
        keys: Sequence[tuple[Scope, str]] = (),
        turns: Sequence[str] = (),
    ) -> int:
        """Delete every key of each session's scope, and `keys` (a `SessionEraser`).

        Returns how many were there. Its appends' turn ids go too, so a turn
        run again on a forgotten session appends afresh. It keeps no turn
        records, so `turns` names none of its own: none goes, none is counted.
        """
        scopes = {self._scope_key(SessionScope(id=session)) for session in sessions}
        slots = {(self._scope_key(scope), key) for scope, key in keys}
        gone = [slot for slot in self._data if slot[0] in scopes or slot in slots]
        # No await from here on: one step for every task on the loop, all or nothing.
        for slot in gone:
            del self._data[slot]
        self._appended = {appended for appended in self._appended if appended[0] not in scopes}
        return len(gone)

    async def list(self, scope: Scope, prefix: str) -> builtins.list[str]:
        """Return the keys of `scope` starting with `prefix`, sorted."""
        wanted = self._scope_key(scope)
        return sorted(k for s, k in self._data if s == wanted and k.startswith(prefix))

    async def search(self, scope: Scope, query: str, limit: int) -> builtins.list[SearchResult]:
        """Return keys whose key or JSON value contains `query` (case-insensitive), best first.

        The score is the number of occurrences; the snippet is the value's text
        around the first occurrence.
        """
        wanted, needle = self._scope_key(scope), query.casefold()
        hits: builtins.list[SearchResult] = []
        for (s, key), value in self._data.items():
            if s != wanted or not needle:
                continue
            text = value if isinstance(value, str) else _json_text(value)
            count = text.casefold().count(needle) + key.casefold().count(needle)
            if count:
                hits.append(
                    SearchResult(key=key, score=float(count), snippet=_snippet(text, needle))
                )
        hits.sort(key=lambda hit: (-hit.score, hit.key))
        return hits[:limit]


class RecordingHook:
    """A hook that records every HookContext it sees and answers with a fixed action."""

    def __init__(
        self,
        points: Iterable[HookPoint] = tuple(HookPoint),
        *,
        action: HookAction | None = None,
    ) -> None:
        """Listen at `points` (all by default) and answer `action` (continue by default)."""
        self._points = frozenset(points)
        self.action: HookAction = action if action is not None else Continue()
        self.seen: builtins.list[HookContext] = []

    @property
    def points(self) -> Set[HookPoint]:
        """The points this hook listens at."""
        return self._points

    async def on_event(self, ctx: HookContext) -> HookAction:
        """Record `ctx` and return the configured action."""
        self.seen.append(ctx)
        return self.action


def _json_text(value: JsonValue) -> str:
    return TypeAdapter[JsonValue](JsonValue).dump_json(value).decode()


def _snippet(text: str, needle: str, width: int = 40) -> str | None:
    at = text.casefold().find(needle)
    if at < 0:
        return None
    start, end = max(0, at - width), min(len(text), at + len(needle) + width)
    return text[start:end]
