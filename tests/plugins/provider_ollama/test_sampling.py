"""Sampling settings on Ollama's `/api/chat`: every one, in `options`."""

from __future__ import annotations

import httpx

from layer0 import TurnInput
from neuron_provider_ollama import OllamaProvider
from neuron_provider_ollama._wire import build_chat_body
from neuron_turn import NeuronTurn, NeuronTurnConfig, Sampling
from neuron_turn.loop.sampling import SAMPLING_SETTINGS
from tests.plugins._sampling import EVERY

from ._support import answering, chat_body, provider_with, sent_json, user_request


def options_for(sampling: Sampling, **fields: object) -> object:
    body = build_chat_body(
        user_request(sampling=sampling, **fields), model="llama3.2", stream=False
    )
    return body.get("options")


def test_each_setting_goes_into_options_as_ollama_names_it() -> None:
    assert options_for(EVERY, max_tokens=50) == {
        "num_predict": 50,
        "top_p": 0.8,
        "top_k": 20,
        "stop": ["END", "STOP"],
        "seed": 7,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.25,
    }


def test_unset_settings_send_nothing() -> None:
    assert options_for(Sampling(seed=0)) == {"seed": 0}
    assert options_for(Sampling()) is None


def test_the_apis_own_field_in_extra_options_wins() -> None:
    options = options_for(EVERY, extra={"options": {"top_p": 0.3, "stop": ["own"]}})
    assert isinstance(options, dict)
    assert (options["top_p"], options["stop"], options["seed"]) == (0.3, ["own"], 7)


def test_the_provider_takes_every_setting() -> None:
    assert OllamaProvider.takes_sampling == frozenset(SAMPLING_SETTINGS)


async def test_a_turn_sends_its_sampling_in_options() -> None:
    seen: list[httpx.Request] = []
    provider = provider_with(answering(chat_body("1, 2, 3"), seen))
    turn = NeuronTurn(provider, config=NeuronTurnConfig(sampling=EVERY))

    output = await turn.execute(TurnInput(message="Count to 10.", trigger="user"))

    assert turn.output_value(output) == "1, 2, 3"
    options = sent_json(seen[0])["options"]
    assert {key: options[key] for key in ("top_p", "top_k", "stop", "seed")} == {
        "top_p": 0.8,
        "top_k": 20,
        "stop": ["END", "STOP"],
        "seed": 7,
    }
    assert (options["presence_penalty"], options["frequency_penalty"]) == (0.5, -0.25)
    await provider.aclose()
