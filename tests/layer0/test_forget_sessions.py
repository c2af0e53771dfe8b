"""`layer0.SessionEraser` and `InMemoryStore.forget_sessions`: whole sessions go, no other's."""

from __future__ import annotations

import copy

from layer0 import HISTORY_KEY, HistoryAppend, SessionEraser, SessionScope, WorkflowScope
from layer0.testing import InMemoryStore

ALICE, BOB = SessionScope(id="alice"), SessionScope(id="bob")


async def _kept(store: InMemoryStore, scope: SessionScope) -> None:
    await store.append_history(HistoryAppend(session=scope.id, turn_id="t1", messages=["hi"]))
    await store.write(scope, "memory/likes", "banana and tea")
    await store.write(scope, "neuron_turn/standing_decisions", {"rm": {"decision": "deny"}})
    await store.write("global", f"index/{scope.id}", {"title": "hi"})


async def test_the_in_memory_store_is_a_session_eraser() -> None:
    assert isinstance(InMemoryStore(), SessionEraser)


async def test_every_key_of_the_session_and_the_keys_named_go_and_are_counted() -> None:
    store = InMemoryStore()
    await _kept(store, ALICE)

    gone = await store.forget_sessions(["alice"], [("global", "index/alice")])

    assert gone == 4
    assert await store.list(ALICE, "") == []
    assert await store.search(ALICE, "banana", 10) == []
    assert await store.read("global", "index/alice") is None


async def test_another_session_and_other_scopes_are_left_exactly_as_they_were() -> None:
    store = InMemoryStore()
    await _kept(store, ALICE)
    await _kept(store, BOB)
    await store.write(WorkflowScope(id="alice"), "k", "not a session")
    alices = {('{"session":"alice"}', key) for key in await store.list(ALICE, "")}
    alices.add(('"global"', "index/alice"))
    others = copy.deepcopy({slot: v for slot, v in store._data.items() if slot not in alices})

    await store.forget_sessions(["alice"], [("global", "index/alice")])

    assert store._data == others


async def test_a_forgotten_session_appends_a_turn_id_it_held_afresh() -> None:
    store = InMemoryStore()
    await _kept(store, ALICE)
    await store.forget_sessions(["alice"])

    again = HistoryAppend(session="alice", turn_id="t1", messages=["anew"])

    assert await store.append_history(again) == 1
    assert await store.read(ALICE, HISTORY_KEY) == ["anew"]


async def test_forgetting_what_is_not_there_deletes_nothing() -> None:
    store = InMemoryStore()
    await _kept(store, BOB)
    before = copy.deepcopy(store._data)

    assert await store.forget_sessions(["alice"], [("global", "index/alice")]) == 0
    assert store._data == before


async def test_turn_ids_named_are_taken_and_none_counted_as_it_keeps_no_records() -> None:
    store = InMemoryStore()
    await _kept(store, ALICE)
    await _kept(store, BOB)
    bobs = copy.deepcopy({slot: v for slot, v in store._data.items() if "bob" in str(slot)})

    gone = await store.forget_sessions(["alice"], [("global", "index/alice")], turns=["t1"])

    assert gone == 4
    assert store._data == bobs
