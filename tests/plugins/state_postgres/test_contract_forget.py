"""Forgetting sessions on every store: all of a session goes at once, no other's is touched."""

from __future__ import annotations

from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    HistoryAppend,
    Scope,
    SessionEraser,
    SessionScope,
    WriteMemoryEffect,
)
from neuron_turn import KEPT_COUNTS_KEY, STANDING_KEY
from neuron_turn.loop.paused_options import PAUSED_OPTIONS_KEY

from .conftest import AnyStore
from .test_contract_turns import record

ALICE, BOB = SessionScope(id="alice"), SessionScope(id="bob")
ALICE_INDEX: tuple[Scope, str] = ("global", "neuron-turn/sessions/alice")


async def keep_a_session(store: AnyStore, session: str, word: str) -> None:
    """What a session holds after turns: history in two appends, memory, loop keys, records."""
    scope = SessionScope(id=session)
    for turn in ("t1", "t2"):
        message: JsonValue = {"role": "user", "content": f"{word} {turn}"}
        await store.append_history(
            HistoryAppend(session=session, turn_id=f"{session}-{turn}", messages=[message])
        )
    await store.apply(
        [
            WriteMemoryEffect(scope=scope, key="memory/likes", value=f"{word} and tea"),
            WriteMemoryEffect(scope=scope, key=STANDING_KEY, value={"rm": {"decision": "deny"}}),
            WriteMemoryEffect(scope=scope, key=PAUSED_OPTIONS_KEY, value={"pending": ["c1"]}),
            WriteMemoryEffect(scope=scope, key=KEPT_COUNTS_KEY, value={"turns": 1}),
        ]
    )
    await store.record_turn(record(f"{session}-t1", session, "2026-01-01T00:00:01.000+00:00"))
    await store.record_turn(record(f"{session}-t2", session, "2026-01-01T00:00:02.000+00:00"))
    await store.write("global", f"neuron-turn/sessions/{session}", {"title": f"{word} t1"})


async def everything_of(store: AnyStore, session: str, word: str) -> dict[str, object]:
    """All a reader can learn of `session`: its keys and values, search hits, turn records.

    Hits without their scores: BM25 weighs a word by how rare it is in the whole file.
    """
    scope = SessionScope(id=session)
    keys = await store.list(scope, "")
    return {
        "values": {key: await store.read(scope, key) for key in keys},
        "hits": [(hit.key, hit.snippet) for hit in await store.search(scope, word, 10)],
        "summaries": await store.turn_summaries(session=session),
        "records": [await store.turn_record(f"{session}-{turn}") for turn in ("t1", "t2")],
        "index": await store.read("global", f"neuron-turn/sessions/{session}"),
    }


async def test_forgetting_a_session_leaves_nothing_of_it_and_counts_what_went(
    any_store: AnyStore,
) -> None:
    await keep_a_session(any_store, "alice", "banana")
    assert (await everything_of(any_store, "alice", "banana"))["hits"] != []

    gone = await any_store.forget_sessions(["alice"], [ALICE_INDEX])

    assert isinstance(any_store, SessionEraser)
    assert gone == 5 + 2 + 1  # five keys, two turn records, the index entry
    assert await everything_of(any_store, "alice", "banana") == {
        "values": {},
        "hits": [],
        "summaries": [],
        "records": [None, None],
        "index": None,
    }
    assert "alice" not in [s.session for s in await any_store.turn_sessions()]


async def test_forgetting_one_session_leaves_another_exactly_as_it_was(
    any_store: AnyStore,
) -> None:
    await keep_a_session(any_store, "alice", "banana")
    await keep_a_session(any_store, "bob", "banana")
    before = await everything_of(any_store, "bob", "banana")

    await any_store.forget_sessions(["alice"], [ALICE_INDEX])

    assert await everything_of(any_store, "bob", "banana") == before
    assert [s.session for s in await any_store.turn_sessions()] == ["bob"]


async def test_forgetting_again_or_an_unknown_session_deletes_nothing_and_is_no_error(
    any_store: AnyStore,
) -> None:
    await keep_a_session(any_store, "alice", "banana")
    await any_store.forget_sessions(["alice"], [ALICE_INDEX])

    assert await any_store.forget_sessions(["alice"], [ALICE_INDEX]) == 0
    assert await any_store.forget_sessions(["never", "with NUL \0 inside"]) == 0


async def test_a_session_forgotten_and_begun_again_appends_its_turns_afresh(
    any_store: AnyStore,
) -> None:
    await keep_a_session(any_store, "alice", "banana")
    await any_store.forget_sessions(["alice"])

    # The same turn id as before: the forgotten one no longer holds it back.
    again = HistoryAppend(session="alice", turn_id="alice-t1", messages=["anew"])

    assert await any_store.append_history(again) == 1
    assert await any_store.read(ALICE, HISTORY_KEY) == ["anew"]


async def test_several_sessions_and_keys_are_forgotten_together(any_store: AnyStore) -> None:
    await keep_a_session(any_store, "alice", "banana")
    await keep_a_session(any_store, "alice/delegate-0123456789abcdef", "cherry")
    await keep_a_session(any_store, "bob", "banana")

    gone = await any_store.forget_sessions(
        ["alice", "alice/delegate-0123456789abcdef"],
        [ALICE_INDEX, ("global", "neuron-turn/sessions/alice/delegate-0123456789abcdef")],
    )

    assert gone == 2 * 8
    assert await any_store.list(ALICE, "") == []
    assert await any_store.list(SessionScope(id="alice/delegate-0123456789abcdef"), "") == []
    assert await any_store.list(BOB, "") != []
    assert await any_store.list("global", "neuron-turn/sessions/") == ["neuron-turn/sessions/bob"]


async def test_sessionless_turn_records_named_go_with_the_session_and_a_sessions_record_stays(
    any_store: AnyStore,
) -> None:
    await keep_a_session(any_store, "alice", "banana")
    await keep_a_session(any_store, "bob", "banana")
    for turn_id in ("delegated-1", "delegated-2", "another-run"):
        await any_store.record_turn(record(turn_id, None, "2026-01-01T00:00:03.000+00:00"))
    bobs = await everything_of(any_store, "bob", "banana")

    # `bob-t1` is a record of session bob: named among `turns`, it stays.
    gone = await any_store.forget_sessions(
        ["alice"], [ALICE_INDEX], turns=["delegated-1", "delegated-2", "bob-t1", "missing"]
    )

    assert gone == 8 + 2
    assert await any_store.turn_record("delegated-1") is None
    assert await any_store.turn_record("delegated-2") is None
    assert await any_store.turn_record("another-run") is not None
    assert await everything_of(any_store, "bob", "banana") == bobs


async def test_sessionless_turn_records_are_forgotten_again_without_error(
    any_store: AnyStore,
) -> None:
    await any_store.record_turn(record("delegated-1", None, "2026-01-01T00:00:03.000+00:00"))
    await any_store.forget_sessions(["alice"], turns=["delegated-1"])

    assert await any_store.forget_sessions(["alice"], turns=["delegated-1", "with NUL \0"]) == 0
