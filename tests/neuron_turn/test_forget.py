"""`forget_session`: a conversation, the sessions it delegated to and their turn records, gone.

Turns run for real: a lead agent delegating to a helper under `LocalOrchestrator`,
on a SQLite store (a `SessionEraser`, which deletes in one transaction) and on a
store without transactions, deleted key by key.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    EffectPolicy,
    Scope,
    SearchResult,
    SessionEraser,
    SessionScope,
    TurnInput,
    TurnSummary,
    WriteFailed,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_turn import (
    STANDING_KEY,
    DelegationsUnreadableError,
    ForgetFailedError,
    NeuronTurn,
    NeuronTurnConfig,
    NothingKeptError,
    PartlyForgottenError,
    TurnRecordsUndeletableError,
    delegation_session,
    forget_session,
    kept_of_session,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ..plugins.orch_local.test_answers import agent, delegate_call
from ..plugins.state_sqlite._raw import raw

TASK = {"agent": "helper", "message": "find the banana shop"}
# The lead's first answer delegates: the second message of its session's history.
HELPERS = delegation_session("alice", 1, TASK)
INDEX: tuple[Scope, str] = ("global", "index/alice")


async def talk(store: SqliteStore | InMemoryStore, session: str, *, delegating: bool) -> None:
    """One turn of `lead` on `session` (delegating to `helper` when asked), then a memory."""
    lead = ScriptedProvider(
        [
            *([tool_call_response(delegate_call("helper", TASK["message"]))] if delegating else []),
            text_response("the banana shop is on Main Street"),
        ]
    )
    helper = ScriptedProvider([text_response("banana shop: Main Street")])
    # A lead reading the store delegates into a session of the helper's own.
    config = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy(grants=["delegate"]))
    agents = {"lead": NeuronTurn(lead, state=store, config=config), "helper": agent(helper)}
    orchestrator = LocalOrchestrator(agents, store, policies={"lead": EffectPolicy.everything()})
    await orchestrator.dispatch(
        "lead", TurnInput(message="where is the banana shop?", trigger="user", session=session)
    )
    scope = SessionScope(id=session)
    await store.write(scope, "memory/likes", "bananas")
    await store.write(scope, STANDING_KEY, {"rm": {"decision": "deny", "reason": "no"}})


async def seen(store: SqliteStore | InMemoryStore, session: str) -> dict[str, object]:
    """All a reader learns of `session`: keys and values, search hits, turn records."""
    scope = SessionScope(id=session)
    values = {key: await store.read(scope, key) for key in await store.list(scope, "")}
    hits = [(hit.key, hit.snippet) for hit in await store.search(scope, "banana", 10)]
    turns = await store.turn_summaries(session=session) if isinstance(store, SqliteStore) else []
    return {"values": values, "hits": hits, "turns": turns}


NOTHING = {"values": {}, "hits": [], "turns": []}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    async with SqliteStore(tmp_path / "state.db") as opened:
        yield opened


async def test_forgetting_leaves_nothing_of_the_session_nor_of_the_one_it_delegated_to(
    store: SqliteStore,
) -> None:
    await talk(store, "alice", delegating=True)
    await store.write(*INDEX, {"title": "where is the banana shop?"})
    assert (await seen(store, HELPERS))["turns"] != []

    forgotten = await forget_session(store, "alice", also=[INDEX])

    assert await seen(store, "alice") == NOTHING
    assert await seen(store, HELPERS) == NOTHING
    assert await store.read(*INDEX) is None
    assert [kept.session for kept in forgotten.sessions] == ["alice", HELPERS]
    assert forgotten.sessions[0].messages == 4  # asked, delegated, its result, answered
    assert forgotten.also == (INDEX,)
    kept_keys = sum(len(kept.keys) for kept in forgotten.sessions)
    recorded = sum(kept.turns_recorded for kept in forgotten.sessions)
    assert forgotten.entries == kept_keys + recorded + 1 and recorded == 2


async def test_another_session_on_the_store_is_left_exactly_as_it_was(
    store: SqliteStore,
) -> None:
    await talk(store, "alice", delegating=True)
    await talk(store, "bob", delegating=True)
    bob = delegation_session("bob", 1, TASK)
    before = (await seen(store, "bob"), await seen(store, bob))

    await forget_session(store, "alice")

    assert (await seen(store, "bob"), await seen(store, bob)) == before


async def test_without_delegated_the_session_it_delegated_to_is_kept(store: SqliteStore) -> None:
    await talk(store, "alice", delegating=True)
    helpers = await seen(store, HELPERS)

    forgotten = await forget_session(store, "alice", delegated=False)

    assert [kept.session for kept in forgotten.sessions] == ["alice"]
    assert await seen(store, "alice") == NOTHING
    assert await seen(store, HELPERS) == helpers


async def test_an_unknown_session_is_refused_naming_it_and_nothing_changes(
    store: SqliteStore,
) -> None:
    await talk(store, "alice", delegating=False)
    before = await seen(store, "alice")

    with pytest.raises(NothingKeptError, match=r"^nothing is kept of session 'alcie' to forget$"):
        await forget_session(store, "alcie")

    assert await seen(store, "alice") == before


async def test_a_transaction_refused_part_way_deletes_nothing(
    store: SqliteStore, tmp_path: Path
) -> None:
    await talk(store, "alice", delegating=True)
    before = (await seen(store, "alice"), await seen(store, HELPERS))
    with raw(tmp_path / "state.db") as connection:
        connection.execute(
            "CREATE TRIGGER keep_turns BEFORE DELETE ON turns "
            "BEGIN SELECT RAISE(ABORT, 'refused by test'); END"
        )

    with pytest.raises(ForgetFailedError, match=r"^session 'alice' was not forgotten: .*refused"):
        await forget_session(store, "alice")

    assert (await seen(store, "alice"), await seen(store, HELPERS)) == before


async def test_a_history_that_does_not_parse_is_refused_unless_forgotten_alone(
    store: SqliteStore,
) -> None:
    await talk(store, "alice", delegating=False)
    await store.write(SessionScope(id="alice"), HISTORY_KEY, [{"role": "nobody"}])

    with pytest.raises(DelegationsUnreadableError, match="nothing was deleted"):
        await forget_session(store, "alice")
    assert (await seen(store, "alice"))["values"] != {}

    await forget_session(store, "alice", delegated=False)
    assert await seen(store, "alice") == NOTHING


class KeyByKey:
    """A `StateStore` without transactions (no `forget_sessions`), whose deletes may fail."""

    def __init__(self, inner: InMemoryStore) -> None:
        self.inner = inner
        self.refused: set[str] = set()
        """Keys whose delete fails."""

    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        return await self.inner.read(scope, key)

    async def list(self, scope: Scope, prefix: str) -> builtins.list[str]:
        return await self.inner.list(scope, prefix)

    async def search(self, scope: Scope, query: str, limit: int) -> builtins.list[SearchResult]:
        return await self.inner.search(scope, query, limit)

    async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
        await self.inner.write(scope, key, value)

    async def delete(self, scope: Scope, key: str) -> None:
        if key in self.refused:
            raise WriteFailed(f"delete of key {key!r} refused by test")
        await self.inner.delete(scope, key)


class RecordsKept(KeyByKey):
    """A store without transactions that keeps turn records, with no way to delete them."""

    async def turn_record(self, turn_id: str) -> None:
        return None

    async def turn_summaries(
        self, *, session: str | None = None, limit: int = 100
    ) -> Sequence[TurnSummary]:
        summary = TurnSummary(
            turn_id="t1", session="alice", agent="lead", started="", status="executed", title=""
        )
        return [summary] if session == "alice" else []

    async def turn_sessions(self, *, limit: int = 100) -> Sequence[object]:
        return []


async def test_key_by_key_a_failure_part_way_names_what_remains_and_forgetting_again_ends_it() -> (
    None
):
    inner = InMemoryStore()
    await talk(inner, "alice", delegating=True)
    await inner.write(*INDEX, "kept")
    store = KeyByKey(inner)
    assert not isinstance(store, SessionEraser)
    store.refused = {"memory/likes"}

    with pytest.raises(PartlyForgottenError) as failed:
        await forget_session(store, "alice", also=[INDEX])

    # The helper's session went first; the lead's history, which names it, goes last.
    assert await inner.list(SessionScope(id=HELPERS), "") == []
    assert str(failed.value) == (
        "session 'alice' is partly forgotten: deleting key 'memory/likes' of session 'alice' "
        "failed (delete of key 'memory/likes' refused by test); still kept: session 'alice': "
        "keys 'memory/likes', 'neuron_turn/standing_decisions', 'messages'; global: keys "
        "'index/alice'. Deleting is idempotent "
        "and what remains is still found from the session, so forgetting it again deletes "
        "the rest once the store takes deletes"
    )
    assert failed.value.remaining == (
        (SessionScope(id="alice"), "memory/likes"),
        (SessionScope(id="alice"), STANDING_KEY),
        (SessionScope(id="alice"), HISTORY_KEY),
        INDEX,
    )
    assert await inner.list(SessionScope(id="alice"), "") == [
        "memory/likes",
        "messages",
        STANDING_KEY,
    ]

    store.refused = set()
    await forget_session(store, "alice", also=[INDEX])
    assert inner._data == {}


async def test_a_store_keeping_turn_records_it_cannot_delete_is_refused_before_any_delete() -> None:
    inner = InMemoryStore()
    await talk(inner, "alice", delegating=False)
    before = dict(inner._data)

    with pytest.raises(TurnRecordsUndeletableError, match=r"keeps 1 turn record\(s\) of session"):
        await forget_session(RecordsKept(inner), "alice")

    assert inner._data == before


async def test_what_is_kept_is_read_without_changing_anything(store: SqliteStore) -> None:
    await talk(store, "alice", delegating=True)
    before = (await seen(store, "alice"), await seen(store, HELPERS))

    kept = await kept_of_session(store, "alice")

    assert [(k.session, k.messages, k.turns_recorded) for k in kept] == [
        ("alice", 4, 1),
        (HELPERS, 2, 1),
    ]
    assert kept[0].keys == ("memory/likes", "messages", STANDING_KEY)
    assert (await seen(store, "alice"), await seen(store, HELPERS)) == before
