"""`fork_session` on a PostgreSQL store: the fork goes on from its turns, the original kept."""

from __future__ import annotations

import pytest

from layer0 import HISTORY_KEY, SessionScope, TurnInput
from neuron_orch_local import LocalOrchestrator
from neuron_state_postgres import PostgresStore
from neuron_turn import NeuronTurn, NeuronTurnConfig, TargetExistsError, fork_session
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse, TextPart
from neuron_turn.testing import FunctionProvider, text_response


def _echo(request: ProviderRequest) -> ProviderResponse:
    last = request.messages[-1].content
    return text_response("echo: " + "".join(p.text for p in last if isinstance(p, TextPart)))


async def _talk(store: PostgresStore, session: str, *messages: str) -> FunctionProvider:
    provider = FunctionProvider(_echo)
    turn = NeuronTurn(provider, state=store, config=NeuronTurnConfig(model="test-model"))
    orchestrator = LocalOrchestrator({"agent": turn}, store)
    for message in messages:
        await orchestrator.dispatch(
            "agent", TurnInput(message=message, trigger="user", session=session)
        )
    return provider


async def test_a_fork_on_postgres_goes_on_from_its_turns_while_the_original_keeps_all(
    store: PostgresStore,
) -> None:
    await _talk(store, "trip", "one", "two", "three")
    original = await store.read(SessionScope(id="trip"), HISTORY_KEY)

    forked = await fork_session(store, "trip", "trip-b", turns=1)
    provider = await _talk(store, "trip-b", "another two")

    assert (forked.turns, forked.source_turns, forked.messages) == (1, 3, 2)
    sent = [part.text for m in provider.requests[0].messages for part in m.content]  # type: ignore[union-attr]
    assert sent == ["one", "echo: one", "another two"]
    assert await store.read(SessionScope(id="trip"), HISTORY_KEY) == original


async def test_a_fork_into_a_postgres_session_holding_a_history_is_refused_unchanged(
    store: PostgresStore,
) -> None:
    await _talk(store, "trip", "one")
    await _talk(store, "taken", "mine")
    kept = await store.read(SessionScope(id="taken"), HISTORY_KEY)

    with pytest.raises(TargetExistsError, match=r"session 'taken' already holds a history"):
        await fork_session(store, "trip", "taken")

    assert await store.read(SessionScope(id="taken"), HISTORY_KEY) == kept
