"""A model naming a memory key PostgreSQL cannot keep loses nothing of its turn."""

from __future__ import annotations

import pytest

from layer0 import HISTORY_KEY, SessionScope, TurnInput
from neuron_orch_local import LocalOrchestrator
from neuron_state_postgres import PostgresStore
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

# Characters that do not repeat: Postgres compresses an index entry that does.
LONG = "".join(chr(0x20000 + (i * 7919) % 40000) for i in range(700))


@pytest.mark.parametrize("key", ["a\x00b", LONG], ids=["nul", "too-long"])
async def test_a_write_of_an_unstorable_key_is_a_tool_error_and_the_turn_is_kept(
    store: PostgresStore, key: str
) -> None:
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "write_memory", {"key": key, "value": 1})),
            text_response("noted"),
        ]
    )
    turn = NeuronTurn(provider, state=store, config=NeuronTurnConfig())
    orchestrator = LocalOrchestrator({"main": turn}, store)
    output = await orchestrator.dispatch(
        "main", TurnInput(message="remember", trigger="user", session="s")
    )
    assert output.message.as_text() == "noted"
    history = await store.read(SessionScope(id="s"), HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 4
    assert history[2]["content"][0]["is_error"] is True  # type: ignore[index,call-overload]
