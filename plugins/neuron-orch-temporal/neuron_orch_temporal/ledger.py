"""The applied-effects ledger: memory effects applied once, however often an activity runs.

Activities run at least once: a worker that dies after writing but before
Temporal hears back has its activity run again. So each memory effect is
keyed by workflow id, run id, turn number and effect index, and once applied
its key is recorded under the reserved scope `APPLIED_SCOPE`; an attempt
skips every effect whose key is already there. A history append is also
idempotent by itself (its turn id), so even a store without the ledger's
transaction never appends a turn twice.

With a store that applies a batch in one transaction (neuron-orch-local's
`BatchStateStore`, like neuron-state-sqlite's `SqliteStore`) and the ledger
in that same store (the default), a turn's effects and their keys are
written in one transaction: all or none, and never twice. With any other store each effect
is written and then its key, so a retry after a crash in between writes that
one effect a second time (the same value, to the same key) and a reader may
see part of a turn's effects before the rest. The run id makes keys unique
even when a workflow id is reused after Temporal's retention period.
The ledger is never pruned; drop `APPLIED_SCOPE` keys of old workflows at will.
"""

from __future__ import annotations

from typing import Final

from layer0 import (
    HISTORY_KEY,
    CustomEffect,
    CustomScope,
    DeleteMemoryEffect,
    HistoryAppend,
    StateStore,
    WriteMemoryEffect,
)
from neuron_orch_local import BatchStateStore, MemoryEffect, append_history

from .messages import IndexedMemoryEffect, MemoryRequest

__all__ = ["APPLIED_SCOPE", "applied_key", "apply_once"]

APPLIED_SCOPE: Final = CustomScope(name="neuron-orch-temporal/applied")
"""The scope holding one key per memory effect applied (see the module doc)."""


def applied_key(request: MemoryRequest, index: int) -> str:
    """Return the ledger key of effect `index` of the turn `request` carries."""
    return f"{_turn_prefix(request)}e{index}"


async def apply_once(
    store: StateStore, request: MemoryRequest, *, ledger: StateStore | None = None
) -> int:
    """Apply the effects of `request` that the ledger has no key for; return how many.

    `ledger` defaults to `store` itself, which makes a batch store's
    application atomic with its record (see the module doc).
    """
    ledger = store if ledger is None else ledger
    done = set(await ledger.list(APPLIED_SCOPE, _turn_prefix(request)))
    pending = [item for item in request.effects if applied_key(request, item.index) not in done]
    if not pending:
        return 0
    records = [_record(request, item) for item in pending]
    if ledger is store and isinstance(store, BatchStateStore):
        await store.apply([*(_memory(item.effect) for item in pending), *records])
        return len(pending)
    for item, record in zip(pending, records, strict=True):
        await _apply(store, _memory(item.effect))
        await ledger.write(record.scope, record.key, record.value)
    return len(pending)


def _turn_prefix(request: MemoryRequest) -> str:
    # The run id (a UUID) ends any ambiguity from '/' inside workflow ids.
    return f"{request.workflow_id}/{request.run_id}/t{request.turn}/"


def _record(request: MemoryRequest, item: IndexedMemoryEffect) -> WriteMemoryEffect:
    effect = item.effect
    key = HISTORY_KEY if isinstance(effect, CustomEffect) else effect.key
    value = {"agent": request.agent, "type": effect.type, "key": key}
    return WriteMemoryEffect(scope=APPLIED_SCOPE, key=applied_key(request, item.index), value=value)


def _memory(effect: WriteMemoryEffect | DeleteMemoryEffect | CustomEffect) -> MemoryEffect:
    if isinstance(effect, CustomEffect):
        return HistoryAppend.from_effect(effect)  # checked with the turn's output
    return effect


async def _apply(store: StateStore, effect: MemoryEffect) -> None:
    if isinstance(effect, WriteMemoryEffect):
        await store.write(effect.scope, effect.key, effect.value)
    elif isinstance(effect, DeleteMemoryEffect):
        await store.delete(effect.scope, effect.key)
    else:
        await append_history(store, effect)
