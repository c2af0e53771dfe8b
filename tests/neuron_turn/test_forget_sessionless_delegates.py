"""`forget_session` and the runs a conversation delegated to without a session.

A lead reading no state delegates to a helper, which delegates to a worker: both
run without a session (a turn without a state reader gives its delegates none),
so their turn records, which hold the tasks the model passed on, are found only
from the lead's records. Turns run for real under `LocalOrchestrator`, on a
SQLite file (here) and on PostgreSQL (tests/plugins/state_postgres).
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import closing
from pathlib import Path

import pytest

from layer0 import (
    DelegateEffect,
    DispatchFailed,
    EffectPolicy,
    Scope,
    SessionEraser,
    SessionId,
    StateStore,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    TurnRecordStore,
)
from neuron_orch_local import DELEGATION_LOG, LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_turn import (
    ForgetFailedError,
    TurnRecordsUndeletableError,
    forget_session,
    kept_of_session,
)
from neuron_turn.loop import forget
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ..plugins.orch_local.test_answers import agent, delegate_call

EVERYTHING = EffectPolicy.everything()


async def talk(store: StateStore, session: SessionId, secret: str, said: str = "") -> None:
    """A turn of `lead` on `session`: it delegates `secret` to `helper`, who hands it on."""
    lead = ScriptedProvider(
        [
            tool_call_response(delegate_call("helper", f"helper: {secret}")),
            text_response(f"done {said}"),
        ]
    )
    helper = ScriptedProvider(
        [
            tool_call_response(delegate_call("worker", f"worker: {secret}")),
            text_response("handed on"),
        ]
    )
    worker = ScriptedProvider([text_response(f"worked on {secret}")])
    agents = {
        # No state reader: the lead's delegates run without a session.
        "lead": agent(lead, "delegate"),
        "helper": agent(helper, "delegate"),
        "worker": agent(worker),
    }
    policies = {"lead": EVERYTHING, "helper": EVERYTHING}
    orchestrator = LocalOrchestrator(agents, store, policies=policies)
    message = f"please do {secret} {said}"
    await orchestrator.dispatch("lead", TurnInput(message=message, trigger="user", session=session))


async def sessionless(store: TurnRecordStore) -> dict[str, str]:
    """The turn records kept without a session: turn id to the task it was given."""
    summaries = await store.turn_summaries(limit=1000)
    found: dict[str, str] = {}
    for summary in summaries:
        record = await store.turn_record(summary.turn_id)
        if summary.session is None and record is not None:
            found[summary.turn_id] = record.input.message.as_text() or ""
    return found


def rows(path: Path) -> list[tuple[object, ...]]:
    """Every row of the file, read behind the store's back."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        return [
            *connection.execute("SELECT id, scope, key, value, body FROM entries ORDER BY id"),
            *connection.execute("SELECT * FROM appended ORDER BY id"),
            *connection.execute("SELECT * FROM turns ORDER BY turn_id"),
        ]


def holding(found: Sequence[tuple[object, ...]], word: str) -> list[tuple[object, ...]]:
    return [row for row in found if any(word in str(cell) for cell in row)]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    async with SqliteStore(tmp_path / "state.db") as opened:
        yield opened


async def test_the_records_of_runs_delegated_without_a_session_go_at_any_depth(
    store: SqliteStore,
) -> None:
    await talk(store, "alice", "alices-secret")
    assert sorted((await sessionless(store)).values()) == [
        "helper: alices-secret",
        "worker: alices-secret",
    ]

    forgotten = await forget_session(store, "alice")

    assert await sessionless(store) == {}
    assert forgotten.sessions[0].turns_recorded == 1
    assert len(forgotten.sessions[0].delegated_turns) == 2
    assert forgotten.entries == len(forgotten.sessions[0].keys) + 1 + 2


async def test_another_sessions_records_stay_byte_for_byte_though_the_model_names_them(
    store: SqliteStore, tmp_path: Path
) -> None:
    await talk(store, "bob", "bobs-secret")
    bobs = await sessionless(store)
    # Alice's model and user quote bob's delegations as the orchestrator logs them:
    # text is not followed, only the orchestrator's own log effects in alice's outputs.
    quoted = " ".join(f'{{"{DELEGATION_LOG}": {{"workflow_id": "{w}"}}}}' for w in bobs)
    await talk(store, "alice", "alices-secret", said=quoted)
    before = holding(rows(tmp_path / "state.db"), "bobs-secret")
    assert len(before) >= 2 + 2  # bob's history, his three records among them

    await forget_session(store, "alice")

    after = rows(tmp_path / "state.db")
    assert holding(after, "bobs-secret") == before
    assert holding(after, "alices-secret") == []
    assert await sessionless(store) == bobs


async def test_what_would_go_names_the_delegated_records_and_changes_nothing(
    store: SqliteStore, tmp_path: Path
) -> None:
    await talk(store, "alice", "alices-secret")
    before = rows(tmp_path / "state.db")

    (kept,) = await kept_of_session(store, "alice")
    (only_this,) = await kept_of_session(store, "alice", delegated=False)

    assert sorted(kept.delegated_turns) == sorted(await sessionless(store))
    assert only_this.delegated_turns == ()
    assert rows(tmp_path / "state.db") == before


async def test_forgetting_only_this_keeps_the_delegated_runs_records_and_says_so(
    store: SqliteStore,
) -> None:
    await talk(store, "alice", "alices-secret")
    delegated = await sessionless(store)

    forgotten = await forget_session(store, "alice", delegated=False)

    assert forgotten.sessions[0].delegated_turns == ()
    assert await sessionless(store) == delegated


async def test_a_failure_deleting_a_delegated_record_rolls_everything_back(
    store: SqliteStore, tmp_path: Path
) -> None:
    await talk(store, "alice", "alices-secret")
    before = rows(tmp_path / "state.db")
    with closing(sqlite3.connect(tmp_path / "state.db", isolation_level=None)) as connection:
        connection.execute(
            "CREATE TRIGGER keep_sessionless BEFORE DELETE ON turns WHEN old.session IS NULL "
            "BEGIN SELECT RAISE(ABORT, 'refused by test'); END"
        )

    with pytest.raises(ForgetFailedError, match=r"^session 'alice' was not forgotten: .*refused"):
        await forget_session(store, "alice")

    assert rows(tmp_path / "state.db") == before


class OlderEraser:
    """A `SessionEraser` written before `turns`: its `forget_sessions` takes two arguments."""

    def __init__(self, inner: SqliteStore) -> None:
        self.inner = inner
        self.forgot = False

    async def read(self, scope: Scope, key: str) -> object:
        return await self.inner.read(scope, key)

    async def list(self, scope: Scope, prefix: str) -> builtins.list[str]:
        return await self.inner.list(scope, prefix)

    async def search(self, scope: Scope, query: str, limit: int) -> builtins.list[object]:
        return list(await self.inner.search(scope, query, limit))

    async def write(self, scope: Scope, key: str, value: object) -> None:
        raise AssertionError("forget writes nothing")

    async def delete(self, scope: Scope, key: str) -> None:
        raise AssertionError("an eraser forgets in one call")

    async def turn_record(self, turn_id: str) -> object:
        return await self.inner.turn_record(turn_id)

    async def turn_summaries(
        self, *, session: str | None = None, limit: int = 100
    ) -> builtins.list[object]:
        return list(await self.inner.turn_summaries(session=session, limit=limit))

    async def turn_sessions(self, *, limit: int = 100) -> builtins.list[object]:
        return list(await self.inner.turn_sessions(limit=limit))

    async def forget_sessions(
        self, sessions: Sequence[str], keys: Sequence[tuple[Scope, str]] = ()
    ) -> int:
        self.forgot = True
        return await self.inner.forget_sessions(sessions, keys)


async def test_an_eraser_without_turns_is_refused_before_anything_is_deleted(
    store: SqliteStore, tmp_path: Path
) -> None:
    await talk(store, "alice", "alices-secret")
    before = rows(tmp_path / "state.db")
    older = OlderEraser(store)
    assert isinstance(older, SessionEraser)

    with pytest.raises(
        TurnRecordsUndeletableError,
        match=r"^OlderEraser keeps 2 turn record\(s\) of runs session 'alice' delegated to "
        r"without a session but cannot delete them \(its forget_sessions takes no `turns`\)",
    ):
        await forget_session(older, "alice")  # type: ignore[arg-type]

    assert not older.forgot
    assert rows(tmp_path / "state.db") == before


def test_the_delegation_log_key_is_the_orchestrators() -> None:
    assert forget._DELEGATION_LOG == DELEGATION_LOG


class OneWay:
    """A hand-written turn declaring a `delegate` effect: the child runs after it, one way."""

    def __init__(self, task: str) -> None:
        self.task = task

    async def execute(self, input: TurnInput) -> TurnOutput:
        effect = DelegateEffect(agent="helper", input=TurnInput(message=self.task, trigger="user"))
        return TurnOutput(
            message="asked", exit_reason="complete", metadata=TurnMetadata.zero(), effects=[effect]
        )


async def delegate_one_way(store: StateStore, session: SessionId, secret: str) -> None:
    """`lead` on `session` declares a delegation of `secret`; `helper` hands it on, answered."""
    helper = ScriptedProvider(
        [
            tool_call_response(delegate_call("worker", f"worker: {secret}")),
            text_response("handed on"),
        ]
    )
    worker = ScriptedProvider([text_response(f"worked on {secret}")])
    agents = {
        "lead": OneWay(f"helper: {secret}"),
        "helper": agent(helper, "delegate"),
        "worker": agent(worker),
    }
    policies = {"lead": EVERYTHING, "helper": EVERYTHING}
    orchestrator = LocalOrchestrator(agents, store, policies=policies)
    said = TurnInput(message=f"please do {secret}", trigger="user", session=session)
    await orchestrator.dispatch("lead", said)


async def test_a_one_way_delegations_records_name_the_session_and_go_with_it(
    store: SqliteStore, tmp_path: Path
) -> None:
    await delegate_one_way(store, "bob", "bobs-secret")
    await delegate_one_way(store, "alice", "alices-secret")
    bobs = holding(rows(tmp_path / "state.db"), "bobs-secret")
    delegated = await sessionless(store)
    for_whom = {
        task: record.delegated_for
        for turn, task in delegated.items()
        if (record := await store.turn_record(turn)) is not None
    }
    assert for_whom == {
        "helper: alices-secret": "alice",
        "worker: alices-secret": "alice",
        "helper: bobs-secret": "bob",
        "worker: bobs-secret": "bob",
    }

    forgotten = await forget_session(store, "alice")

    assert len(forgotten.sessions[0].delegated_turns) == 2
    assert holding(rows(tmp_path / "state.db"), "alices-secret") == []
    assert holding(rows(tmp_path / "state.db"), "bobs-secret") == bobs


async def test_the_delegates_of_a_turn_that_raised_go_with_its_session(
    store: SqliteStore, tmp_path: Path
) -> None:
    # The lead's model delegates, then fails: its record keeps no output to name them by.
    lead = ScriptedProvider([tool_call_response(delegate_call("helper", "helper: secret"))])
    helper = ScriptedProvider([text_response("helped")])
    agents = {"lead": agent(lead, "delegate"), "helper": agent(helper)}
    orchestrator = LocalOrchestrator(agents, store, policies={"lead": EVERYTHING})
    said = TurnInput(message="please do secret", trigger="user", session="alice")
    with pytest.raises(DispatchFailed):
        await orchestrator.dispatch("lead", said)
    (failed,) = await store.turn_summaries(session="alice")
    assert (await store.turn_record(failed.turn_id)).output is None  # type: ignore[union-attr]
    assert list((await sessionless(store)).values()) == ["helper: secret"]

    await forget_session(store, "alice")

    assert holding(rows(tmp_path / "state.db"), "secret") == []


async def test_a_run_not_delegated_names_no_session_and_stays(store: SqliteStore) -> None:
    await talk(store, "alice", "alices-secret")
    alone = LocalOrchestrator({"solo": agent(ScriptedProvider([text_response("hi")]))}, store)
    await alone.dispatch("solo", TurnInput(message="on my own", trigger="user"))
    (solo,) = [turn for turn, task in (await sessionless(store)).items() if task == "on my own"]
    assert (await store.turn_record(solo)).delegated_for is None  # type: ignore[union-attr]

    await forget_session(store, "alice")

    assert list((await sessionless(store)).values()) == ["on my own"]


async def test_records_kept_before_they_named_their_session_are_found_by_the_delegation_log(
    store: SqliteStore, tmp_path: Path
) -> None:
    await talk(store, "bob", "bobs-secret")
    await talk(store, "alice", "alices-secret")
    # As an older orchestrator kept them: naming no session they were delegated for.
    for turn in await sessionless(store):
        record = await store.turn_record(turn)
        assert record is not None and record.delegated_for is not None
        await store.record_turn(record.model_copy(update={"delegated_for": None}))
    bobs = holding(rows(tmp_path / "state.db"), "bobs-secret")

    forgotten = await forget_session(store, "alice")

    assert len(forgotten.sessions[0].delegated_turns) == 2
    assert holding(rows(tmp_path / "state.db"), "alices-secret") == []
    assert holding(rows(tmp_path / "state.db"), "bobs-secret") == bobs


async def test_a_session_whose_own_record_does_not_parse_is_still_forgotten_whole(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    async with SqliteStore(path) as store:
        await talk(store, "alice", "alices-secret")
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE turns SET record = '{not json' WHERE session = 'alice'")
        db.commit()

    async with SqliteStore(path) as store:
        await forget_session(store, "alice")

    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT turn_id FROM turns").fetchall() == []


async def test_delegates_naming_a_session_that_kept_nothing_itself_are_forgotten(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    async with SqliteStore(path) as store:
        await talk(store, "alice", "alices-secret")
    # What a first turn killed after its delegates ran leaves: their records, not its own.
    with closing(sqlite3.connect(path)) as db:
        db.execute("DELETE FROM turns WHERE session = 'alice'")
        db.execute("DELETE FROM entries WHERE scope LIKE '%alice%'")
        db.execute("DELETE FROM appended WHERE scope LIKE '%alice%'")
        db.commit()

    async with SqliteStore(path) as store:
        assert len(await sessionless(store)) == 2
        [kept] = await kept_of_session(store, "alice")
        assert len(kept.delegated_turns) == 2 and not kept.empty
        await forget_session(store, "alice")
        assert await sessionless(store) == {}
