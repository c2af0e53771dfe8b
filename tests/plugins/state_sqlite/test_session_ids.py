"""Session ids a caller may give, odd ones too: each keeps its history, or is refused clearly."""

from __future__ import annotations

import pytest

from layer0 import HISTORY_KEY, HistoryAppend, SerializationError, SessionScope
from neuron_state_sqlite import SqliteStore

ODD_IDS = [
    "a\0b",
    "",
    " ",
    "\n",
    "é/../..",
    "'; DROP TABLE entries;--",
    '{"session":"x"}',
    "x" * 10_000,
]


async def test_session_ids_with_odd_characters_keep_their_histories_apart(
    store: SqliteStore,
) -> None:
    for number, session in enumerate(ODD_IDS):
        append = HistoryAppend(session=session, turn_id="t", messages=[{"n": number}])
        assert await store.append_history(append) == 1
    for number, session in enumerate(ODD_IDS):
        assert await store.read(SessionScope(id=session), HISTORY_KEY) == [{"n": number}]


async def test_a_session_id_with_a_lone_surrogate_is_refused_as_a_serialization_error(
    store: SqliteStore,
) -> None:
    # Bytes of argv that are not UTF-8 reach Python as lone surrogates.
    session = "caf\udce9"
    append = HistoryAppend(session=session, turn_id="t", messages=[{"n": 1}])
    with pytest.raises(SerializationError, match="cannot store scope"):
        await store.append_history(append)
    with pytest.raises(SerializationError, match="cannot store scope"):
        await store.read(SessionScope(id=session), HISTORY_KEY)
    with pytest.raises(SerializationError, match="cannot store scope"):
        await store.write(SessionScope(id=session), "k", 1)
