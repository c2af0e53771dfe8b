"""Applying one turn's memory effects all or none.

A store with a batch method (`BatchStateStore`, e.g. neuron-state-sqlite's
`SqliteStore.apply`) does it in one transaction. For any other store the
effects are applied one by one after reading the previous value of every
key they touch; when one fails, the keys already changed get those values
back (a key that had none is deleted). That is atomic against failures, not
isolated: a concurrent writer can see the partial state, or write in between
and be overwritten by the restore. A stored JSON `null` reads as "no value"
and is restored by deleting the key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeAlias, runtime_checkable

from pydantic import JsonValue

from layer0 import DeleteMemoryEffect, DispatchFailed, Scope, StateStore, WriteMemoryEffect

__all__ = ["BatchStateStore", "MemoryEffect", "apply_memory"]

MemoryEffect: TypeAlias = WriteMemoryEffect | DeleteMemoryEffect
"""An effect on the state store."""


@runtime_checkable
class BatchStateStore(StateStore, Protocol):
    """A StateStore that applies several memory effects in one transaction."""

    async def apply(self, effects: Iterable[WriteMemoryEffect | DeleteMemoryEffect]) -> None:
        """Apply `effects` in order, all or none; raise when none were applied."""
        ...


async def apply_memory(store: StateStore, effects: Sequence[MemoryEffect], *, owner: str) -> None:
    """Apply `effects` to `store` in order, all or none.

    Raises:
        DispatchFailed: nothing was applied (the store's error is the cause),
            or restoring after a failure failed too, which the message says.
    """
    if not effects:
        return
    if not isinstance(store, BatchStateStore) and len(effects) > 1:
        await _apply_or_restore(store, effects, owner=owner)
        return
    try:
        if isinstance(store, BatchStateStore):
            await store.apply(effects)
        else:
            await _one(store, effects[0])
    except Exception as exc:
        raise _not_applied(owner, effects, exc) from exc


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
    slots = list(dict.fromkeys((effect.scope, effect.key) for effect in touched))
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
    else:
        await store.delete(effect.scope, effect.key)


def _not_applied(owner: str, effects: Sequence[MemoryEffect], exc: Exception) -> DispatchFailed:
    return DispatchFailed(
        f"the memory effects of {owner} were not applied (none of {len(effects)}): "
        f"{type(exc).__name__}: {exc}"
    )
