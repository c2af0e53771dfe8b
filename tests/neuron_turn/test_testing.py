"""The public test doubles users test their agents with."""

from __future__ import annotations

import pytest

from layer0 import ModelError, Turn
from neuron_turn import NeuronTurn, Provider, ProviderRequest, ProviderResponse
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    ScriptExhaustedError,
    text_response,
)

from .support import ask


async def test_scripted_provider_returns_responses_in_order_and_records_requests() -> None:
    provider = ScriptedProvider([text_response("one"), text_response("two")])
    request = ProviderRequest(model="m", messages=())
    assert (await provider.complete(request)).content[0].text == "one"  # type: ignore[union-attr]
    assert (await provider.complete(request)).content[0].text == "two"  # type: ignore[union-attr]
    assert provider.requests == [request, request]
    assert provider.remaining == 0


async def test_scripted_provider_fails_clearly_when_it_runs_out() -> None:
    provider = ScriptedProvider([text_response("only")])
    await provider.complete(ProviderRequest(model="m", messages=()))
    with pytest.raises(ScriptExhaustedError, match="call 2 but only 1 response"):
        await provider.complete(ProviderRequest(model="m", messages=()))


async def test_running_out_inside_a_turn_is_a_model_error() -> None:
    turn = NeuronTurn(ScriptedProvider([]))
    with pytest.raises(ModelError, match="ran out"):
        await turn.execute(ask())


async def test_function_provider_answers_with_a_sync_or_async_function() -> None:
    def sync(request: ProviderRequest) -> ProviderResponse:
        return text_response(f"model={request.model}")

    async def asynchronous(request: ProviderRequest) -> ProviderResponse:
        return text_response("async")

    request = ProviderRequest(model="m", messages=())
    assert (await FunctionProvider(sync).complete(request)).content[0].text == "model=m"  # type: ignore[union-attr]
    async_provider = FunctionProvider(asynchronous)
    assert (await async_provider.complete(request)).content[0].text == "async"  # type: ignore[union-attr]
    assert async_provider.requests == [request]


async def test_function_provider_keeps_no_requests_when_record_is_off() -> None:
    provider = FunctionProvider(lambda r: text_response("x"), record=False)
    request = ProviderRequest(model="m", messages=())
    assert (await provider.complete(request)).content[0].text == "x"  # type: ignore[union-attr]
    assert provider.requests == []


def test_doubles_and_neuron_turn_satisfy_their_protocols() -> None:
    assert isinstance(ScriptedProvider([]), Provider)
    assert isinstance(FunctionProvider(lambda r: text_response("x")), Provider)
    assert isinstance(NeuronTurn(ScriptedProvider([])), Turn)
