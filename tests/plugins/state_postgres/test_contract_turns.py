"""Turn records on every store: kept, replaced by id, listed newest first, grouped by session."""

from __future__ import annotations

from layer0 import (
    HISTORY_KEY,
    HistoryAppend,
    SessionScope,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    TurnRecord,
    WriteMemoryEffect,
    usd,
)

from .conftest import AnyStore


def record(turn_id: str, session: str | None, started: str, text: str = "hi") -> TurnRecord:
    metadata = TurnMetadata(
        tokens_in=10, tokens_out=2, cost=usd("0.001"), turns_used=1, tools_called=[], duration=50
    )
    return TurnRecord(
        turn_id=turn_id,
        session=session,
        agent="main",
        workflow_id="w",
        started=started,
        input=TurnInput(message=text, trigger="user", session=session),
        output=TurnOutput(message="ok", exit_reason="complete", metadata=metadata),
        status="executed",
    )


async def test_a_kept_record_reads_back_equal_and_a_missing_one_is_none(
    any_store: AnyStore,
) -> None:
    kept = record("t1", "s", "2026-01-01T00:00:01.000+00:00", "with NUL \u0000 inside")
    await any_store.record_turn(kept)
    assert await any_store.turn_record("t1") == kept
    assert await any_store.turn_record("missing") is None


async def test_recording_a_turn_id_again_replaces_its_record(any_store: AnyStore) -> None:
    await any_store.record_turn(record("t1", "s", "2026-01-01T00:00:01.000+00:00", "first"))
    await any_store.record_turn(record("t1", "s", "2026-01-01T00:00:01.000+00:00", "second"))
    summaries = await any_store.turn_summaries()
    assert [(s.turn_id, s.title) for s in summaries] == [("t1", "second")]


async def test_summaries_come_newest_first_for_all_or_one_session(any_store: AnyStore) -> None:
    await any_store.record_turn(record("a1", "a", "2026-01-01T00:00:01.000+00:00"))
    await any_store.record_turn(record("b1", "b", "2026-01-01T00:00:02.000+00:00"))
    await any_store.record_turn(record("a2", "a", "2026-01-01T00:00:03.000+00:00"))
    await any_store.record_turn(record("n1", None, "2026-01-01T00:00:04.000+00:00"))
    assert [s.turn_id for s in await any_store.turn_summaries()] == ["n1", "a2", "b1", "a1"]
    assert [s.turn_id for s in await any_store.turn_summaries(session="a")] == ["a2", "a1"]
    assert [s.turn_id for s in await any_store.turn_summaries(limit=2)] == ["n1", "a2"]
    assert await any_store.turn_summaries(limit=0) == []
    assert len(await any_store.turn_summaries(limit=10**30)) == 4
    first = (await any_store.turn_summaries(session="a"))[0]
    assert (first.tokens_in, first.cost, first.duration) == (10, usd("0.001"), 50)


async def test_turns_started_at_once_are_listed_by_turn_id(any_store: AnyStore) -> None:
    for turn_id in ("b", "B", "a", "é"):
        await any_store.record_turn(record(turn_id, "s", "2026-01-01T00:00:01.000+00:00"))
    assert [s.turn_id for s in await any_store.turn_summaries()] == ["B", "a", "b", "é"]


async def test_sessions_group_their_turns_with_the_first_title_and_the_last_time(
    any_store: AnyStore,
) -> None:
    await any_store.record_turn(record("a1", "a", "2026-01-01T00:00:01.000+00:00", "plan a trip"))
    await any_store.record_turn(record("b1", "b", "2026-01-01T00:00:02.000+00:00", "other"))
    await any_store.record_turn(record("a2", "a", "2026-01-01T00:00:03.000+00:00", "more"))
    await any_store.record_turn(record("n1", None, "2026-01-01T00:00:00.000+00:00", "alone"))
    sessions = await any_store.turn_sessions()
    assert [(s.session, s.turns, s.title, s.updated[17:19]) for s in sessions] == [
        ("a", 2, "plan a trip", "03"),
        ("b", 1, "other", "02"),
        (None, 1, "alone", "00"),
    ]
    assert len(await any_store.turn_sessions(limit=1)) == 1


async def test_apply_recorded_keeps_the_effects_and_the_record_together(
    any_store: AnyStore,
) -> None:
    append = HistoryAppend(session="s", turn_id="t1", messages=[{"role": "user", "content": "hi"}])
    kept = record("t1", "s", "2026-01-01T00:00:01.000+00:00")
    await any_store.apply_recorded(
        [WriteMemoryEffect(scope=SessionScope(id="s"), key="k", value=1), append], kept
    )
    assert await any_store.turn_record("t1") == kept
    assert await any_store.read(SessionScope(id="s"), "k") == 1
    assert await any_store.read(SessionScope(id="s"), HISTORY_KEY) == append.messages
