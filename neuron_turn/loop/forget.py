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
- with `delegated=True`, the turn records of the runs its turns delegated to
  without a session (a turn without a state reader, or a delegate its parent
  cannot resume), which hold the task the model passed on: at any depth.
  They are found by what the orchestrator wrote, never by what a model
  said: a record kept without a session names the session it was delegated
  for (`layer0.TurnRecord.delegated_for`, the nearest at any depth); and for
  records written before that was kept, the `log` effect the orchestrator
  puts in a turn's output for each delegation it answered
  (`neuron_orch_local.DELEGATION_LOG`) names the child's workflow, a random
  id it chose, whose records kept without a session are the child's, found
  from the session's own records. A record kept with a session is never
  deleted this way, so no other session's record can go. Not found: records
  written before `delegated_for` of a delegation declared one way (a
  hand-written turn's `delegate` effect, or an orchestrator not answering
  delegations) or of a turn that raised (its record keeps no output);
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

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

from layer0 import (
    HISTORY_KEY,
    ContextAssemblyError,
    LogEffect,
    NonRetryableError,
    Scope,
    SessionEraser,
    SessionId,
    SessionScope,
    StateError,
    StateReader,
    StateStore,
    TurnRecord,
    TurnRecordReader,
    WorkflowId,
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

_DELEGATION_LOG = "delegation"
"""The key of a delegation in its `log` effect's data (`neuron_orch_local.DELEGATION_LOG`)."""


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

    def __init__(
        self, session: SessionId, store: object, records: int, *, delegated: bool = False
    ) -> None:
        """`store` keeps `records` turn records of `session`; nothing was deleted.

        `delegated`: they are those of the runs it delegated to without a session,
        which the store's `forget_sessions` cannot be given (it takes no `turns`).
        """
        self.session, self.records = session, records
        if delegated:
            what = f"of runs session {session!r} delegated to without a session"
            why = "its forget_sessions takes no `turns`"
        else:
            what, why = f"of session {session!r}", "it is not a layer0.SessionEraser"
        super().__init__(
            f"{type(store).__name__} keeps {records} turn record(s) {what} but cannot "
            f"delete them ({why}), so nothing was deleted: forgetting the rest would leave "
            "those behind unsaid"
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
    delegated_turns: tuple[str, ...] = ()
    """The ids of the turn records of the runs it delegated to without a session, at any depth.

    Found from its own turn records (see the module doc); empty without `delegated`.
    """

    @property
    def empty(self) -> bool:
        """Whether nothing at all is kept of it."""
        return not self.keys and not self.turns_recorded and not self.delegated_turns


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
    """How many entries went: keys and turn records (those of sessionless delegates too)."""


async def kept_of_session(
    store: StateReader,
    session: SessionId,
    *,
    delegated: bool = True,
) -> tuple[KeptSession, ...]:
    """Return what `store` keeps of `session`, then of the sessions it delegated to; reads only.

    With `delegated`, the sessions its turns delegated to follow it, at any
    depth, those holding something only, and each names the turn records of
    the runs it delegated to without a session (`KeptSession.delegated_turns`).

    Raises:
        DelegationsUnreadableError: `delegated`, and a history does not parse.
        layer0.StateError: the store failed to read.
    """
    found: list[KeptSession] = []
    waiting = [session]
    seen: set[SessionId] = set()
    sessionless = _Sessionless(store) if delegated else None
    while waiting:
        current = waiting.pop(0)
        if current in seen:
            continue
        seen.add(current)
        kept = await _kept(store, current, sessionless)
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
        TurnRecordsUndeletableError: the store keeps turn records it cannot delete (a
            sessionless delegate's included); nothing deleted.
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
        ids = [kept.session for kept in sessions]
        turns = list(dict.fromkeys(turn for kept in sessions for turn in kept.delegated_turns))
        if turns and not _takes_turns(store):
            raise TurnRecordsUndeletableError(session, store, len(turns), delegated=True)
        try:
            if turns:
                entries = await store.forget_sessions(ids, also, turns=turns)
            else:
                entries = await store.forget_sessions(ids, also)
        except StateError as exc:
            raise ForgetFailedError(session, exc) from exc
        return ForgottenSession(session, sessions, there, entries)
    recorded = next((kept for kept in sessions if kept.turns_recorded), None)
    if recorded is not None:
        raise TurnRecordsUndeletableError(recorded.session, store, recorded.turns_recorded)
    order = _deletion_order(sessions, there)
    await _delete_in_order(store, session, order)
    return ForgottenSession(session, sessions, there, len(order))


async def _kept(
    store: StateReader, session: SessionId, sessionless: _Sessionless | None
) -> KeptSession:
    """What is kept of `session`; with `sessionless`, its sessionless delegates' records too."""
    scope = SessionScope(id=session)
    keys = tuple(await store.list(scope, ""))
    history = await store.read(scope, HISTORY_KEY) if HISTORY_KEY in keys else None
    messages = len(history) if isinstance(history, list) else 0
    if not isinstance(store, TurnRecordReader):
        return KeptSession(session, keys, messages, 0)
    summaries = await store.turn_summaries(session=session, limit=_ALL_RECORDS)
    delegated: tuple[str, ...] = ()
    if sessionless is not None:
        children: list[WorkflowId] = []
        for summary in summaries:
            record = await _own_record(store, summary.turn_id)
            if record is not None and record.session == session:
                children.extend(_delegated_workflows(record))
        # Asked even of a session with no records of its own: a first turn killed after it
        # delegated left none, and its delegates' records name the session all the same.
        delegated = await sessionless.reached_from(session, children)
    return KeptSession(session, keys, messages, len(summaries), delegated)


_Entry = tuple[str, list[WorkflowId]]
"""A record kept without a session: its turn id, and the workflows it delegated to."""


class _Sessionless:
    """The turn records a store keeps without a session, read once, when first needed.

    Why: a store lists records by session, and these have none: they are found
    by the session they were delegated for, or by their workflow.
    """

    def __init__(self, store: StateReader) -> None:
        self._store = store
        self._indexed = False
        self._by_workflow: dict[WorkflowId, list[_Entry]] = {}
        self._by_delegator: dict[SessionId, list[_Entry]] = {}

    async def reached_from(
        self, session: SessionId, workflows: Sequence[WorkflowId]
    ) -> tuple[str, ...]:
        """The ids of the records delegated for `session` or run in `workflows`, at any depth."""
        await self._index()
        found: dict[str, None] = {}
        waiting: list[WorkflowId] = []
        for turn_id, children in self._by_delegator.get(session, ()):
            found[turn_id] = None
            waiting.extend(children)
        waiting.extend(workflows)
        seen: set[WorkflowId] = set()
        while waiting:
            workflow = waiting.pop(0)
            if workflow in seen:
                continue
            seen.add(workflow)
            for turn_id, children in self._by_workflow.get(workflow, ()):
                found[turn_id] = None
                waiting.extend(children)
        return tuple(found)

    async def _index(self) -> None:
        if self._indexed:
            return
        self._indexed = True
        store = self._store
        assert isinstance(store, TurnRecordReader)  # only asked of one
        for summary in await store.turn_summaries(limit=_ALL_RECORDS):
            if summary.session is not None:
                continue
            record = await _sessionless_record(store, summary.turn_id)
            if record is None:
                continue
            entry = (record.turn_id, _delegated_workflows(record))
            self._by_workflow.setdefault(record.workflow_id, []).append(entry)
            if record.delegated_for is not None:
                self._by_delegator.setdefault(record.delegated_for, []).append(entry)


async def _own_record(store: TurnRecordReader, turn_id: str) -> TurnRecord | None:
    """The session's own record `turn_id`; None if it does not parse.

    Why unreadable is skipped: it goes with its session all the same (records are
    deleted by session), and a record that does not parse must not keep the rest of
    the conversation from being forgotten; its delegates are then found only by the
    session they were delegated for.
    """
    try:
        return await store.turn_record(turn_id)
    except StateError:
        return None


async def _sessionless_record(store: TurnRecordReader, turn_id: str) -> TurnRecord | None:
    """The record `turn_id` if it is kept without a session; None if not, or unreadable.

    Why unreadable is skipped: a record that does not parse names no workflow,
    so it cannot be found as anyone's, and must not stop a forget of another.
    """
    try:
        record = await store.turn_record(turn_id)
    except StateError:
        return None
    return record if record is not None and record.session is None else None


def _delegated_workflows(record: TurnRecord) -> list[WorkflowId]:
    """The workflows of the delegations the orchestrator answered in `record`'s turn."""
    effects = () if record.output is None else record.output.effects
    found: list[WorkflowId] = []
    for effect in effects:
        if isinstance(effect, LogEffect) and isinstance(effect.data, dict):
            delegation = effect.data.get(_DELEGATION_LOG)
            if isinstance(delegation, dict):
                workflow = delegation.get("workflow_id")
                if isinstance(workflow, str) and workflow:
                    found.append(workflow)
    return found


def _takes_turns(eraser: SessionEraser) -> bool:
    """Whether `eraser.forget_sessions` takes `turns` (one written before it does not)."""
    try:
        parameters = inspect.signature(eraser.forget_sessions).parameters
    except (TypeError, ValueError):
        return False
    return "turns" in parameters or any(
        parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values()
    )


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
