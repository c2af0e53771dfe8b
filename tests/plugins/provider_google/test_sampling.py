"""Sampling settings on the Gemini API: all in `generationConfig`; at most 5 stop sequences."""

from __future__ import annotations

import json
from typing import Any

import pytest

from layer0 import TurnInput
from neuron_provider_google import GoogleProvider
from neuron_provider_google._wire import UnsupportedContentError, request_body
from neuron_turn import NeuronTurn, NeuronTurnConfig, Sampling
from neuron_turn.loop.provider_errors import InvalidRequestError
from neuron_turn.loop.sampling import SAMPLING_SETTINGS
from tests.plugins._sampling import EVERY

from ._support import MODEL, json_response, mocked, request, response, text


def generation(
    sampling: Sampling, defaults: dict[str, Any] | None = None, **fields: Any
) -> dict[str, Any]:
    body = request_body(request(sampling=sampling, **fields), defaults=defaults, model=MODEL)
    config = body.get("generationConfig", {})
    assert isinstance(config, dict)
    return config


def test_each_setting_goes_into_generation_config_as_the_api_names_it() -> None:
    assert generation(EVERY, max_tokens=50) == {
        "maxOutputTokens": 50,
        "topP": 0.8,
        "topK": 20,
        "stopSequences": ["END", "STOP"],
        "seed": 7,
        "presencePenalty": 0.5,
        "frequencyPenalty": -0.25,
    }


def test_unset_settings_send_nothing() -> None:
    assert generation(Sampling(seed=0)) == {"seed": 0}
    assert "generationConfig" not in request_body(request(), model=MODEL)


def test_the_apis_own_field_in_extra_or_body_defaults_wins() -> None:
    extra = {"generationConfig": {"topP": 0.3, "stopSequences": ["own"]}}
    defaults = {"generationConfig": {"seed": 99, "presencePenalty": 0.0}}
    config = generation(EVERY, extra=extra, defaults=defaults)
    assert (config["topP"], config["stopSequences"], config["seed"]) == (0.3, ["own"], 99)
    assert config["presencePenalty"] == 0.0
    assert config["topK"] == 20  # the settings the provider does not set itself still go


def test_more_stop_sequences_than_the_api_takes_are_refused_naming_the_limit() -> None:
    six = Sampling(stop_sequences=tuple("abcdef"))
    with pytest.raises(UnsupportedContentError, match=r"at most 5 stop sequences; .* has 6"):
        generation(six)
    assert generation(Sampling(stop_sequences=tuple("abcde")))["stopSequences"] == list("abcde")
    # The provider's own stop sequences replace the setting's: nothing to refuse.
    assert generation(six, extra={"generationConfig": {"stopSequences": ["x"]}}) == {
        "stopSequences": ["x"]
    }


def test_a_seed_beyond_32_bits_is_refused() -> None:
    assert generation(Sampling(seed=-(2**31)))["seed"] == -(2**31)
    with pytest.raises(UnsupportedContentError, match=r"32-bit integer; .* 2147483648"):
        generation(Sampling(seed=2**31))


def test_the_provider_takes_every_setting() -> None:
    assert GoogleProvider.takes_sampling == frozenset(SAMPLING_SETTINGS)


async def test_too_many_stop_sequences_fail_before_the_call() -> None:
    provider, recorder = mocked()
    with pytest.raises(InvalidRequestError, match="google: the Gemini API takes at most 5"):
        await provider.complete(request(sampling=Sampling(stop_sequences=tuple("abcdef"))))
    assert recorder.requests == []


async def test_a_turn_sends_its_sampling_in_generation_config() -> None:
    provider, recorder = mocked(json_response(response(text("1, 2, 3"))))
    turn = NeuronTurn(provider, config=NeuronTurnConfig(model=MODEL, sampling=EVERY))

    output = await turn.execute(TurnInput(message="Count to 10.", trigger="user"))

    assert turn.output_value(output) == "1, 2, 3"
    config = json.loads(recorder.requests[0].content)["generationConfig"]
    assert {key: config[key] for key in ("topP", "topK", "stopSequences", "seed")} == {
        "topP": 0.8,
        "topK": 20,
        "stopSequences": ["END", "STOP"],
        "seed": 7,
    }
    assert (config["presencePenalty"], config["frequencyPenalty"]) == (0.5, -0.25)
