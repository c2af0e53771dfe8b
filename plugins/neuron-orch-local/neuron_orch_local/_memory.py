"""Applying one turn's memory effects all or none: writes, deletes and its history append.

A store with a batch method (`BatchStateStore`, e.g. neuron-state-sqlite's
`SqliteStore.apply`) does it in one transaction, the history append included.
For any other store the writes and deletes are applied one by one after
reading the previous value of every key they touch, then the history
append; when one fails, the keys already changed get those values back (a
key that had none is deleted). That is atomic against failures, not
isolated: a concurrent writer can see the partial state, or write in between
and be overwritten by the restore. A stored JSON `null` reads as "no value"
and is restored by deleting the key.

The history append goes to `layer0.HistoryStore.append_history` when the
store has it (one step, once per turn id). A store without it gets a read,
then a write of the longer list: correct when one orchestrator's dispatches
on a session are the only writers (it runs them one at a time), not across
processes; use a `HistoryStore` (SqliteStore is one) for that.

`apply_memory_retrying` tries again when the store refused with `WriteFailed`
(a lost connection, a locked or full disk), under the orchestrator's
`RetryPolicy`: all or none makes another try safe, and the turn is not run
again. A `HistoryConflict`, or any error that is not a refused write, is not
retried: another try would be refused the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias, cast, runtime_checkable

from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    DeleteMemoryEffect,
    DispatchFailed,
    HistoryAppend,
    HistoryConflict,
    HistoryStore,
    Scope,
    StateStore,
    TurnRecord,
    TurnRecordStore,
    WriteFailed,
    WriteMemoryEffect,
)

from .errors import MemoryNotAppliedError
from .recording import RecordedBatchStore
from .retry import Clock, RetryPolicy

__all__ = [
    "BatchStateStore",
    "MemoryEffect",
    "StoreAbilities",
    "append_history",
    "apply_memory",
    "apply_memory_retrying",
]

MemoryEffect: TypeAlias = WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend
"""A change to the state store: a write, a delete, or a session history append."""


@runtime_checkable
class BatchStateStore(StateStore, Protocol):
    """A StateStore that applies several memory effects in one transaction."""

    async def apply(self, effects: Iterable[MemoryEffect]) -> None:
        """Apply `effects` in order, all or none; raise when none were applied.

        A `HistoryAppend` whose turn id the session holds already changes
        nothing; one whose `expected_length` does not match raises
        `HistoryConflict`, and then nothing is applied.
        """
        ...


@dataclass(frozen=True, slots=True)
class StoreAbilities:
    """Which optional protocols a store implements, checked once for all its turns.

    Why: a runtime-checkable `isinstance` costs 3-8 µs on Python 3.11, and
    each dispatch asked three of them; an orchestrator's store never changes.
    """

    batch: bool
    recorded: bool
    records: bool

    @classmethod
    def of(cls, store: StateStore) -> StoreAbilities:
        """Check `store` against `BatchStateStore`, `RecordedBatchStore`, `TurnRecordStore`."""
        return cls(
            batch=isinstance(store, BatchStateStore),
            recorded=isinstance(store, RecordedBatchStore),
            records=isinstance(store, TurnRecordStore),
        )


async def append_history(store: StateStore, append: HistoryAppend) -> int:
    """Append to a session's history on any store; return the history's new length.

    Raises:
        HistoryConflict: `expected_length` is set and the history's length differs.
        WriteFailed: the stored history is not a list.
    """
    if isinstance(store, HistoryStore):
        return await store.append_history(append)
    history = await store.read(append.scope, HISTORY_KEY)
    history = [] if history is None else history
    if not isinstance(history, list):
        raise WriteFailed(f"the history of session {append.session!r} is not a list")
    if append.expected_length is not None and append.expected_length != len(history):
        raise HistoryConflict(append.session, expected=append.expected_length, found=len(history))
    await store.write(append.scope, HISTORY_KEY, [*history, *append.messages])
    return len(history) + len(append.messages)


async def apply_memory(
    store: StateStore,
    effects: Sequence[MemoryEffect],
    *,
    owner: str,
    record: TurnRecord | None = None,
    abilities: StoreAbilities | None = None,
) -> bool:
    """Apply `effects` to `store` in order (history appends last), all or none.

    With `record`, a store that can (`RecordedBatchStore`) stores it in the
    same transaction; returns whether it did. `abilities` are the store's
    (checked here when not given).

    Raises:
        MemoryNotAppliedError: nothing was applied (the store's error is the cause,
            e.g. `HistoryConflict`), or restoring after a failure failed too,
            which the message says.
    """
    if not effects:
        return False
    ordered = [
        *(e for e in effects if not isinstance(e, HistoryAppend)),
        *(e for e in effects if isinstance(e, HistoryAppend)),
    ]
    if abilities is None:
        abilities = StoreAbilities.of(store)
    if not abilities.batch and len(ordered) > 1:
        await _apply_or_restore(store, ordered, owner=owner)
        return False
    try:
        if record is not None and abilities.recorded:
            await cast(RecordedBatchStore, store).apply_recorded(ordered, record)
            return True
        if abilities.batch:
            await cast(BatchStateStore, store).apply(ordered)
        else:
            await _one(store, ordered[0])
    except Exception as exc:
        raise _not_applied(owner, ordered, exc) from exc
    return False


async def apply_memory_retrying(
    store: StateStore,
    effects: Sequence[MemoryEffect],
    *,
    owner: str,
    policy: RetryPolicy,
    clock: Clock,
    randomness: Callable[[], float],
    record: TurnRecord | None = None,
    abilities: StoreAbilities | None = None,
) -> bool:
    """`apply_memory`, tried again within `policy` while the store refuses with `WriteFailed`.

    Raises:
        MemoryNotAppliedError: none was applied after the attempts `policy`
            allows (the message says how many), or at once for an error no
            other try would change (`HistoryConflict`, a value that cannot be
            stored).
    """
    started = clock.now()
    attempt = 1
    while True:
        try:
            return await apply_memory(
                store, effects, owner=owner, record=record, abilities=abilities
            )
        except MemoryNotAppliedError as exc:
            wait = _retry_wait(exc, attempt, policy, clock.now() - started, randomness)
            if wait is None:
                if attempt == 1:
                    raise
                cause = exc.__cause__
                assert isinstance(cause, Exception)  # `apply_memory` always chains it
                raise _not_applied(owner, exc.effects, cause, attempts=attempt) from cause
        attempt += 1
        await clock.sleep(wait)


def _retry_wait(
    error: MemoryNotAppliedError,
    attempt: int,
    policy: RetryPolicy,
    elapsed: float,
    randomness: Callable[[], float],
) -> float | None:
    """Seconds to wait before trying `error`'s effects again, or None not to."""
    cause = error.__cause__
    if not isinstance(cause, WriteFailed) or isinstance(cause, HistoryConflict):
        return None
    return policy.next_wait(attempt, None, randomness(), elapsed)


async def _apply_or_restore(
    store: StateStore, effects: Sequence[MemoryEffect], *, owner: str
) -> None:
    try:
        previous = await _read_previous(store, effects)
    except Exception as exc:
        raise _not_applied(owner, effects, exc) from exc
    done = 0
    try:
        for effect in effects:
            done += 1
            await _one(store, effect)
    except BaseException as exc:
        # Cancellation too: the turn's writes must not be left half done.
        await _restore(store, effects[:done], previous, owner=owner, failure=exc)
        if isinstance(exc, Exception):
            raise _not_applied(owner, effects, exc) from exc
        raise


async def _read_previous(
    store: StateStore, effects: Sequence[MemoryEffect]
) -> dict[tuple[Scope, str], JsonValue | None]:
    previous: dict[tuple[Scope, str], JsonValue | None] = {}
    for effect in effects:
        if isinstance(effect, HistoryAppend):
            continue
        slot = (effect.scope, effect.key)
        if slot not in previous:
            previous[slot] = await store.read(effect.scope, effect.key)
    return previous


async def _restore(
    store: StateStore,
    touched: Sequence[MemoryEffect],
    previous: dict[tuple[Scope, str], JsonValue | None],
    *,
    owner: str,
    failure: BaseException,
) -> None:
    # Appends come last, so one that failed changed nothing and none needs undoing.
    slots = list(
        dict.fromkeys(
            (effect.scope, effect.key)
            for effect in touched
            if not isinstance(effect, HistoryAppend)
        )
    )
    try:
        for scope, key in reversed(slots):
            value = previous[(scope, key)]
            await (store.delete(scope, key) if value is None else store.write(scope, key, value))
    except Exception as exc:
        keys = ", ".join(repr(key) for _, key in slots)
        raise DispatchFailed(
            f"the memory effects of {owner} failed ({type(failure).__name__}: {failure}) and "
            f"restoring the keys already changed failed too ({type(exc).__name__}: {exc}); "
            f"these keys may hold partial changes: {keys}"
        ) from failure


async def _one(store: StateStore, effect: MemoryEffect) -> None:
    if isinstance(effect, WriteMemoryEffect):
        await store.write(effect.scope, effect.key, effect.value)
    elif isinstance(effect, DeleteMemoryEffect):
        await store.delete(effect.scope, effect.key)
    else:
        await append_history(store, effect)


def _not_applied(
    owner: str, effects: Sequence[MemoryEffect], exc: Exception, *, attempts: int = 1
) -> MemoryNotAppliedError:
    tries = "" if attempts == 1 else f" in {attempts} attempts"
    return MemoryNotAppliedError(
        f"the memory effects of {owner} were not applied{tries} (none of {len(effects)}): "
        f"{type(exc).__name__}: {exc}; they are kept on this error (`effects`)",
        effects,
        attempts=attempts,
    )
