"""`forget_session` on PostgreSQL: the records of runs delegated to without a session go too.

The same conversation as tests/neuron_turn/test_forget_sessionless_delegates.py, run
for real under `LocalOrchestrator` on a real PostgreSQL server.
"""

from __future__ import annotations

import pytest

from neuron_state_postgres import PostgresStore
from neuron_turn import ForgetFailedError, forget_session

from ...neuron_turn.test_forget_sessionless_delegates import holding, sessionless, talk
from ._raw import refuse_turn_deletes
from .test_forget import all_rows


async def test_the_delegated_runs_records_go_and_another_sessions_rows_stay_byte_for_byte(
    store: PostgresStore, conninfo: str, schema: str
) -> None:
    await talk(store, "bob", "bobs-secret")
    bobs = await sessionless(store)
    await talk(store, "alice", "alices-secret", said=" ".join(bobs))
    before = holding(await all_rows(conninfo, schema), "bobs-secret")
    assert len(await sessionless(store)) == 4

    forgotten = await forget_session(store, "alice")

    after = await all_rows(conninfo, schema)
    assert holding(after, "alices-secret") == []
    assert holding(after, "bobs-secret") == before
    assert await sessionless(store) == bobs
    assert len(forgotten.sessions[0].delegated_turns) == 2


async def test_a_failure_deleting_a_delegated_record_rolls_everything_back(
    store: PostgresStore, conninfo: str, schema: str
) -> None:
    await talk(store, "alice", "alices-secret")
    before = await all_rows(conninfo, schema)
    await refuse_turn_deletes(conninfo, schema, when="old.session IS NULL")

    with pytest.raises(ForgetFailedError, match=r"^session 'alice' was not forgotten: .*refused"):
        await forget_session(store, "alice")

    assert await all_rows(conninfo, schema) == before
    assert len(await sessionless(store)) == 2
