"""End to end: LocalOrchestrator runs NeuronTurn on PostgresStore, one session, two dispatches."""

from __future__ import annotations

from layer0 import HISTORY_KEY, EffectPolicy, SessionScope, TurnInput
from neuron_orch_local import BatchStateStore, LocalOrchestrator, RecordedBatchStore
from neuron_state_postgres import PostgresStore
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

SESSION = SessionScope(id="trip")


def ask(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user", session="trip")


async def test_a_session_over_two_dispatches_keeps_history_memory_and_turn_records(
    conninfo: str, schema: str
) -> None:
    provider = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("c1", "write_memory", {"key": "city", "value": "Lisbon"})
            ),
            text_response("noted: Lisbon"),
            text_response("you are going to Lisbon"),
        ]
    )
    async with PostgresStore(conninfo, schema=schema) as store:
        assert isinstance(store, BatchStateStore)
        assert isinstance(store, RecordedBatchStore)
        turn = NeuronTurn(
            provider,
            state=store,
            config=NeuronTurnConfig(effect_policy=EffectPolicy.everything()),
        )
        orchestrator = LocalOrchestrator(
            {"main": turn}, store, default_policy=EffectPolicy.everything()
        )
        first = await orchestrator.dispatch("main", ask("remember: I am going to Lisbon"))
        second = await orchestrator.dispatch("main", ask("where am I going?"))
    assert (first.message.as_text(), second.message.as_text()) == (
        "noted: Lisbon",
        "you are going to Lisbon",
    )
    # The second model call saw the whole first exchange.
    assert len(provider.requests[2].messages) == len(provider.requests[1].messages) + 2

    async with PostgresStore(conninfo, schema=schema) as reopened:
        assert await reopened.read(SESSION, "city") == "Lisbon"
        history = await reopened.read(SESSION, HISTORY_KEY)
        assert isinstance(history, list)
        assert [m["role"] for m in history] == [  # type: ignore[index,call-overload]
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        summaries = await reopened.turn_summaries(session="trip")
        assert [s.title for s in summaries] == [
            "where am I going?",
            "remember: I am going to Lisbon",
        ]
        assert all(s.status == "executed" for s in summaries)
        [trip] = await reopened.turn_sessions()
        assert (trip.session, trip.turns) == ("trip", 2)
        kept = await reopened.turn_record(summaries[1].turn_id)
        assert kept is not None and kept.output is not None
        assert kept.output.message.as_text() == "noted: Lisbon"
        assert [r.key for r in await reopened.search(SESSION, "lisbon", 5)] == ["city"]
