"""Sampling settings on the embedded llama.cpp server: every one, as the server's own fields.

No model runs: the provider talks to a scripted server through `base_url=` and a mock transport.
"""

from __future__ import annotations

from typing import Any

import httpx

from layer0 import TurnInput
from neuron_provider_local import LocalProvider
from neuron_turn import NeuronTurn, NeuronTurnConfig, Sampling
from neuron_turn.loop.provider import ProviderRequest
from neuron_turn.loop.sampling import SAMPLING_SETTINGS
from tests.plugins._sampling import EVERY

from ._support import BASE_URL, completion, scripted_client, server_error, tool, user

SERVED = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
SENT = {
    "top_p": 0.8,
    "top_k": 20,
    "stop": ["END", "STOP"],
    "seed": 7,
    "presence_penalty": 0.5,
    "frequency_penalty": -0.25,
}


def answering(*answers: httpx.Response) -> tuple[httpx.AsyncClient, list[dict[str, Any]]]:
    queue = list(answers) or [httpx.Response(200, json=completion("Hi"))]
    return scripted_client(lambda body: queue.pop(0) if len(queue) > 1 else queue[0])


async def sent_bodies(request: ProviderRequest, *answers: httpx.Response) -> list[dict[str, Any]]:
    client, bodies = answering(*answers)
    async with client, LocalProvider(SERVED, base_url=BASE_URL, client=client) as provider:
        await provider.complete(request)
    return bodies


def asking(sampling: Sampling, **fields: Any) -> ProviderRequest:
    return ProviderRequest(model="default", messages=[user("Hi")], sampling=sampling, **fields)


async def test_each_setting_goes_as_the_servers_own_field() -> None:
    [body] = await sent_bodies(asking(EVERY))
    assert {key: body.get(key) for key in SENT} == SENT


async def test_unset_settings_send_nothing() -> None:
    [body] = await sent_bodies(asking(Sampling(seed=0)))
    assert body["seed"] == 0
    assert not {"top_p", "top_k", "stop", "presence_penalty", "frequency_penalty"} & body.keys()


async def test_the_apis_own_field_in_extra_wins() -> None:
    [body] = await sent_bodies(asking(EVERY, extra={"top_p": 0.3, "stop": ["own"]}))
    assert (body["top_p"], body["stop"], body["seed"]) == (0.3, ["own"], 7)


async def test_the_raw_retry_keeps_the_sampling() -> None:
    request = asking(EVERY, tools=[tool("calculator")])
    bodies = await sent_bodies(
        request,
        httpx.Response(500, json=server_error()),
        httpx.Response(200, json=completion("391")),
    )
    assert len(bodies) == 2 and bodies[1]["tool_choice"] == "none"
    assert all({key: body.get(key) for key in SENT} == SENT for body in bodies)


def test_the_provider_takes_every_setting() -> None:
    assert LocalProvider.takes_sampling == frozenset(SAMPLING_SETTINGS)


async def test_a_turn_sends_its_sampling_to_the_server() -> None:
    client, bodies = answering(httpx.Response(200, json=completion("1, 2, 3")))
    async with client, LocalProvider(SERVED, base_url=BASE_URL, client=client) as provider:
        turn = NeuronTurn(provider, config=NeuronTurnConfig(sampling=EVERY))
        output = await turn.execute(TurnInput(message="Count to 10.", trigger="user"))

    assert turn.output_value(output) == "1, 2, 3"
    assert {key: bodies[0].get(key) for key in SENT} == SENT
