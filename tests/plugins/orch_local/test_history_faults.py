"""A dispatch whose history no store can hold fails at once, saying so, before any model call."""

from __future__ import annotations

from pathlib import Path

import pytest

from layer0 import DispatchFailed, NonRetryableError, TurnInput
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_turn import NeuronTurn, ProviderRequest, ProviderResponse
from neuron_turn.testing import FunctionProvider, text_response


async def test_a_session_id_with_a_lone_surrogate_fails_once_without_calling_the_model(
    tmp_path: Path,
) -> None:
    calls: list[ProviderRequest] = []

    def answer(request: ProviderRequest) -> ProviderResponse:
        calls.append(request)
        return text_response("hi")

    async with SqliteStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator(
            {"a": NeuronTurn(FunctionProvider(answer), state=store)}, store
        )
        # Bytes of argv that are not UTF-8 reach Python as lone surrogates.
        ask = TurnInput(message="hi", trigger="user", session="caf\udce9")
        with pytest.raises(DispatchFailed, match="cannot store scope") as raised:
            await orchestrator.dispatch("a", ask)
    # Not a retryable failure: retries could never pass.
    assert isinstance(raised.value.__cause__, NonRetryableError)
    assert "attempts" not in str(raised.value)
    assert calls == []
