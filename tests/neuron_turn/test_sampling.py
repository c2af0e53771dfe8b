"""Sampling settings for any provider: checked when made, on every request, refused over a
provider that does not take them."""

from __future__ import annotations

from typing import Any

import pytest

from layer0 import NonRetryableError, TurnInput
from neuron_turn import (
    InvalidSamplingError,
    NeuronTurn,
    NeuronTurnConfig,
    Sampling,
    UnsupportedSamplingError,
)
from neuron_turn.loop.sampling import SAMPLING_SETTINGS
from neuron_turn.testing import ScriptedProvider, text_response


async def test_each_model_call_carries_the_turns_sampling() -> None:
    sampling = Sampling(top_p=0.9, top_k=40, stop_sequences=["END"], seed=7)
    provider = ScriptedProvider([text_response("4")], takes_sampling=SAMPLING_SETTINGS)
    turn = NeuronTurn(provider, config=NeuronTurnConfig(model="m", sampling=sampling))
    await turn.execute(TurnInput(message="2+2?", trigger="user"))
    [request] = provider.requests
    assert request.sampling == Sampling(top_p=0.9, top_k=40, stop_sequences=("END",), seed=7)


async def test_without_sampling_requests_leave_it_to_the_api() -> None:
    provider = ScriptedProvider([text_response("4")])
    await NeuronTurn(provider).execute(TurnInput(message="2+2?", trigger="user"))
    assert provider.requests[0].sampling is None


def test_names_are_the_settings_set() -> None:
    assert Sampling().names == frozenset()
    assert Sampling(seed=0, presence_penalty=0.0).names == {"seed", "presence_penalty"}
    assert Sampling(stop_sequences=("x",), frequency_penalty=-2).names == {
        "stop_sequences",
        "frequency_penalty",
    }


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"top_p": 0}, "top_p must be a number above 0 and at most 1; got 0"),
        ({"top_p": 1.5}, "top_p must be"),
        ({"top_p": float("nan")}, "top_p must be"),
        ({"top_p": True}, "top_p must be"),
        ({"top_k": 0}, "top_k must be a whole number, 1 or more; got 0"),
        ({"top_k": 2.0}, "top_k must be"),
        ({"seed": "7"}, "seed must be a whole number; got '7'"),
        ({"seed": False}, "seed must be"),
        ({"presence_penalty": 2.5}, "presence_penalty must be a number from -2 to 2"),
        ({"frequency_penalty": float("inf")}, "frequency_penalty must be"),
        ({"stop_sequences": "END"}, "stop_sequences must be a sequence of non-empty strings"),
        ({"stop_sequences": ["END", ""]}, "stop_sequences must be"),
        ({"stop_sequences": [3]}, "stop_sequences must be"),
    ],
)
def test_a_value_no_api_takes_is_refused_naming_it(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(InvalidSamplingError, match=named.replace("(", r"\(")) as caught:
        Sampling(**fields)
    assert isinstance(caught.value, NonRetryableError) and isinstance(caught.value, ValueError)


def test_a_turn_over_a_provider_missing_some_settings_is_refused_naming_them() -> None:
    provider = ScriptedProvider([text_response("never")], takes_sampling=["top_p", "seed"])
    sampling = Sampling(top_p=0.5, top_k=3, frequency_penalty=1)
    with pytest.raises(UnsupportedSamplingError) as caught:
        NeuronTurn(provider, config=NeuronTurnConfig(sampling=sampling))
    assert str(caught.value) == (
        "the provider ScriptedProvider does not take the sampling setting(s) top_k, "
        "frequency_penalty; leave them unset, or set the API's own field in extra"
    )
    assert provider.requests == []
    NeuronTurn(provider, config=NeuronTurnConfig(sampling=Sampling(top_p=0.5, seed=1)))


def test_sampling_given_as_a_mapping_is_a_type_error_naming_what_it_takes() -> None:
    with pytest.raises(TypeError, match=r"sampling is a Sampling\(...\), not dict"):
        NeuronTurnConfig(sampling={"top_p": 0.9})  # type: ignore[arg-type]


def test_as_fields_names_the_set_settings_as_the_api_does_and_leaves_out_the_rest() -> None:
    sampling = Sampling(top_p=0.5, stop_sequences=("END",), seed=0, top_k=3)
    names = {"top_p": "topP", "stop_sequences": "stop", "seed": "seed", "frequency_penalty": "f"}
    assert sampling.as_fields(names) == {"topP": 0.5, "stop": ["END"], "seed": 0}
    assert Sampling().as_fields(names) == {}
