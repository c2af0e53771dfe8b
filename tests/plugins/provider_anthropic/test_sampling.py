"""Sampling settings on the Messages API: top_p, top_k and stop sequences; no seed or penalties."""

from __future__ import annotations

import httpx
import pytest

from layer0 import TurnInput
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_anthropic._wire import build_body
from neuron_turn import NeuronTurn, NeuronTurnConfig, Sampling, UnsupportedSamplingError

from ._support import API_KEY, FakeApi, message_json, reply, request


def body_with(sampling: Sampling, **fields: object) -> dict[str, object]:
    return build_body(request(sampling=sampling, **fields), model="m", max_tokens=100)


def test_each_setting_goes_into_the_body_as_the_api_names_it() -> None:
    body = body_with(Sampling(top_p=0.8, top_k=20, stop_sequences=("END", "STOP")))
    assert (body["top_p"], body["top_k"], body["stop_sequences"]) == (0.8, 20, ["END", "STOP"])


def test_unset_settings_send_nothing() -> None:
    body = body_with(Sampling(top_k=5))
    assert body["top_k"] == 5 and "top_p" not in body and "stop_sequences" not in body
    assert not {"top_p", "top_k", "stop_sequences"} & set(
        build_body(request(), model="m", max_tokens=9)
    )


def test_the_apis_own_field_in_extra_wins() -> None:
    body = body_with(Sampling(top_p=0.8), extra={"top_p": 0.5})
    assert body["top_p"] == 0.5


@pytest.mark.parametrize(
    ("sampling", "named"),
    [
        (Sampling(seed=7), "seed"),
        (Sampling(top_p=0.9, presence_penalty=1, frequency_penalty=1), "presence_penalty, freq"),
    ],
)
def test_a_turn_setting_what_the_api_lacks_is_refused_when_made(
    sampling: Sampling, named: str
) -> None:
    provider = AnthropicProvider("claude-haiku-4-5", api_key=API_KEY)
    with pytest.raises(UnsupportedSamplingError, match=f"AnthropicProvider .* {named}"):
        NeuronTurn(provider, config=NeuronTurnConfig(sampling=sampling))


async def test_a_turn_sends_its_sampling_and_ends_at_a_stop_sequence() -> None:
    api = FakeApi(
        reply(message_json([{"type": "text", "text": "1, 2, 3"}], stop_reason="stop_sequence"))
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(api))
    provider = AnthropicProvider("claude-haiku-4-5", api_key=API_KEY, client=client)
    sampling = Sampling(top_k=10, stop_sequences=["4"])
    turn = NeuronTurn(provider, config=NeuronTurnConfig(sampling=sampling))

    output = await turn.execute(TurnInput(message="Count to 10.", trigger="user"))

    assert turn.output_value(output) == "1, 2, 3" and output.exit_reason == "complete"
    assert api.bodies[0]["top_k"] == 10 and api.bodies[0]["stop_sequences"] == ["4"]
    await client.aclose()
