"""Forgetting a session: deleting a conversation and everything kept of it, for good.

For privacy (a person asks to be forgotten) and housekeeping, as the OpenAI
Agents SDK's `session.clear_session()`. `forget_session(store, "trip")`
deletes, of `trip`:

- every key of its session scope: the history (`layer0.HISTORY_KEY`), the
  memory the model wrote there, the standing decisions (`standing`), the
  options a paused turn kept (`paused_options`), the counts of a turn kept in
  part (`continuation`), and anything else under `SessionScope(id="trip")`;
- its turn records, when the store keeps them (`layer0.TurnRecordStore`);
- with `delegated=True` (the default), the same of each session its turns
  delegated to (`delegation_session` names them from the parent's history:
  they hold the same person's conversation), and of theirs, at any depth;
- `also`: other keys kept about it, such as the command line's index.

Nothing of another session is touched. A fork (`fork_session`) copies the
messages into a session of its own: forgetting the original does not forget
a fork, nor the reverse. Large payloads a Temporal worker keeps out of its
histories (`--payload-dir`) are content-addressed and may be shared between
sessions, so they are not deleted; `neuron-temporal payloads prune` removes
those no history needs.

A store that is a `layer0.SessionEraser` deletes it all in one transaction:
all or nothing. Any other store is emptied key by key, the sessions it
delegated to first and each history last, so that a failure part-way leaves
what remains findable: `PartlyForgottenError` names it, and forgetting the
session again deletes it (deletes are idempotent). A store that keeps turn
records but cannot delete them is refused before anything is deleted.

Forgetting is not a lock: a turn running on the session meanwhile may write
to it again afterwards. Stop its runs first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from layer0 import (
    HISTORY_KEY,
    ContextAssemblyError,
    NonRetryableError,
    Scope,
    SessionEraser,
    SessionId,
    SessionScope,
    StateError,
    StateReader,
    StateStore,
    TurnRecordReader,
    scope_text,
)

from ._stored_history import read_history
from .effect_answers import delegation_sessions

__all__ = [
    "DelegationsUnreadableError",
    "ForgetError",
    "ForgetFailedError",
    "ForgottenSession",
    "KeptSession",
    "NothingKeptError",
    "PartlyForgottenError",
    "TurnRecordsUndeletableError",
    "forget_session",
    "kept_of_session",
]

_ALL_RECORDS = 2**31 - 1
"""As many turn records as a session can have: all of them are counted."""


class ForgetError(NonRetryableError):
    """A session that could not be forgotten (base of the forget errors)."""


class NothingKeptError(ForgetError, LookupError):
    """Nothing is kept of the session: no key of its scope, no turn record, none of `also`."""

    def __init__(self, session: SessionId, close: Sequence[SessionId] = ()) -> None:
        """`close`: the kept sessions whose ids are nearest to `session`, if any."""
        self.session = session
        self.close = tuple(close)
        meant = f" (did you mean {', '.join(map(repr, self.close))}?)" if self.close else ""
        super().__init__(f"nothing is kept of session {session!r} to forget{meant}")


class DelegationsUnreadableError(ForgetError, ValueError):
    """The sessions a session delegated to cannot be found: a history does not parse."""

    def __init__(self, session: SessionId, why: str) -> None:
        """`session`'s stored history does not parse, as `why` says; nothing was deleted."""
        self.session = session
        super().__init__(
            f"the sessions session {session!r} delegated to cannot be found, as its history "
            f"does not parse ({why}); nothing was deleted. Forget it without them "
            "(delegated=False; on the command line --only-this) to delete it alone, which "
            "keeps any session it delegated to"
        )


class TurnRecordsUndeletableError(ForgetError):
    """The store keeps turn records of the session but has no way to delete them."""

    def __init__(self, session: SessionId, store: object, records: int) -> None:
        """`store` keeps `records` turn records of `session`; nothing was deleted."""
        self.session, self.records = session, records
        super().__init__(
            f"{type(store).__name__} keeps {records} turn record(s) of session {session!r} "
            "but cannot delete them (it is not a layer0.SessionEraser), so nothing was "
            "deleted: forgetting the rest would leave those behind unsaid"
        )


class ForgetFailedError(ForgetError):
    """A store that forgets in one transaction refused; it deleted nothing."""

    def __init__(self, session: SessionId, cause: StateError) -> None:
        """The store refused forgetting `session` with `cause`."""
        self.session = session
        super().__init__(
            f"session {session!r} was not forgotten: {cause} (the store deletes all of it "
            "in one transaction, or nothing)"
        )


class PartlyForgottenError(ForgetError):
    """A store without transactions failed part-way: some of the session is deleted, some kept."""

    def __init__(
        self,
        session: SessionId,
        failed: tuple[Scope, str],
        remaining: Sequence[tuple[Scope, str]],
        cause: BaseException,
    ) -> None:
        """Deleting `failed` failed with `cause`; `remaining` (it included) may still be kept."""
        self.session, self.failed, self.remaining = session, failed, tuple(remaining)
        super().__init__(
            f"session {session!r} is partly forgotten: deleting {_named(failed)} failed "
            f"({cause}); still kept: {_listed(self.remaining)}. Deleting is idempotent and "
            "what remains is still found from the session, so forgetting it again deletes "
            "the rest once the store takes deletes"
        )


@dataclass(frozen=True, slots=True)
class KeptSession:
    """What a store keeps of one session: its keys, its history's length, its turn records."""

    session: SessionId
    keys: tuple[str, ...]
    """Every key of its scope, its history's (`messages`) included."""
    messages: int
    """How many messages its history holds (0: none)."""
    turns_recorded: int
    """How many turn records the store keeps of it (0 when it keeps none)."""

    @property
    def empty(self) -> bool:
        """Whether nothing at all is kept of it."""
        return not self.keys and not self.turns_recorded


@dataclass(frozen=True, slots=True)
class ForgottenSession:
    """A session `forget_session` deleted, and what went with it."""

    session: SessionId
    """The session asked for."""
    sessions: tuple[KeptSession, ...]
    """What was kept of it, then of each session it delegated to, as found before deleting."""
    also: tuple[tuple[Scope, str], ...]
    """The other keys deleted with it (those of `also` that were there)."""
    entries: int
    """How many entries went: keys and turn records."""


async def kept_of_session(
    store: StateReader,
    session: SessionId,
    *,
    delegated: bool = True,
) -> tuple[KeptSession, ...]:
    """Return what `store` keeps of `session`, then of the sessions it delegated to; reads only.

    With `delegated`, the sessions its turns delegated to follow it, at any
    depth, those holding something only.

    Raises:
        DelegationsUnreadableError: `delegated`, and a history does not parse.
        layer0.StateError: the store failed to read.
    """
    found: list[KeptSession] = []
    waiting = [session]
    seen: set[SessionId] = set()
    while waiting:
        current = waiting.pop(0)
        if current in seen:
            continue
        seen.add(current)
        kept = await _kept(store, current)
        if kept.empty and current != session:
            continue
        found.append(kept)
        if delegated and HISTORY_KEY in kept.keys:
            waiting.extend(await _delegated_from(store, current))
    return tuple(found)


async def forget_session(
    store: StateStore,
    session: SessionId,
    *,
    delegated: bool = True,
    also: Sequence[tuple[Scope, str]] = (),
) -> ForgottenSession:
    """Delete everything kept of `session` (see the module doc); `also`: other keys with it.

    Raises:
        NothingKeptError: nothing is kept of `session` nor under `also`.
        DelegationsUnreadableError: `delegated`, and a history does not parse; nothing deleted.
        TurnRecordsUndeletableError: the store keeps turn records it cannot delete; nothing
            deleted.
        ForgetFailedError: the store (a `SessionEraser`) refused; nothing deleted.
        PartlyForgottenError: another store failed part-way; names what remains.
        layer0.StateError: the store failed to read; nothing deleted.
    """
    if not session:
        raise ValueError("session: a session id is not empty")
    sessions = await kept_of_session(store, session, delegated=delegated)
    there = tuple([(scope, key) for scope, key in also if await store.read(scope, key) is not None])
    if all(kept.empty for kept in sessions) and not there:
        raise NothingKeptError(session)
    if isinstance(store, SessionEraser):
        try:
            entries = await store.forget_sessions([kept.session for kept in sessions], also)
        except StateError as exc:
            raise ForgetFailedError(session, exc) from exc
        return ForgottenSession(session, sessions, there, entries)
    recorded = next((kept for kept in sessions if kept.turns_recorded), None)
    if recorded is not None:
        raise TurnRecordsUndeletableError(recorded.session, store, recorded.turns_recorded)
    order = _deletion_order(sessions, there)
    await _delete_in_order(store, session, order)
    return ForgottenSession(session, sessions, there, len(order))


async def _kept(store: StateReader, session: SessionId) -> KeptSession:
    scope = SessionScope(id=session)
    keys = tuple(await store.list(scope, ""))
    history = await store.read(scope, HISTORY_KEY) if HISTORY_KEY in keys else None
    records = 0
    if isinstance(store, TurnRecordReader):
        records = len(await store.turn_summaries(session=session, limit=_ALL_RECORDS))
    messages = len(history) if isinstance(history, list) else 0
    return KeptSession(session, keys, messages, records)


async def _delegated_from(store: StateReader, session: SessionId) -> list[SessionId]:
    """The sessions the `delegate` calls of `session`'s history ran in, in order."""
    try:
        history = await read_history(store, session)
    except ContextAssemblyError as exc:
        raise DelegationsUnreadableError(session, str(exc.__cause__ or exc)) from exc
    return [
        child
        for position, message in enumerate(history)
        if message.role == "assistant"
        for child in delegation_sessions(session, position, message.content).values()
    ]


def _deletion_order(
    sessions: Sequence[KeptSession], also: Sequence[tuple[Scope, str]]
) -> list[tuple[Scope, str]]:
    """Every key to delete, the deepest delegated session first and each history last.

    Why: a session's history names the sessions it delegated to, so while it is
    kept, a second attempt still finds what a failed one left.
    """
    order: list[tuple[Scope, str]] = []
    for kept in reversed(sessions):
        scope = SessionScope(id=kept.session)
        keys = sorted(kept.keys, key=lambda key: key == HISTORY_KEY)
        order.extend((scope, key) for key in keys)
    return [*order, *also]


async def _delete_in_order(
    store: StateStore, session: SessionId, order: Sequence[tuple[Scope, str]]
) -> None:
    for done, slot in enumerate(order):
        try:
            await store.delete(*slot)
        except Exception as exc:
            raise PartlyForgottenError(session, slot, order[done:], exc) from exc


def _named(slot: tuple[Scope, str]) -> str:
    scope, key = slot
    where = f"session {scope.id!r}" if isinstance(scope, SessionScope) else scope_text(scope)
    return f"key {key!r} of {where}"


def _listed(slots: Sequence[tuple[Scope, str]]) -> str:
    by_scope: dict[str, list[str]] = {}
    for scope, key in slots:
        where = f"session {scope.id!r}" if isinstance(scope, SessionScope) else scope_text(scope)
        by_scope.setdefault(where, []).append(repr(key))
    return "; ".join(f"{where}: keys {', '.join(keys)}" for where, keys in by_scope.items())
