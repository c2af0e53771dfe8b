"""`openai-responses:<model>` through the plugin: registration, options, the public name."""

from __future__ import annotations

import httpx

import neuron_provider_openai
from neuron_provider_openai import OpenAIResponsesProvider
from neuron_provider_openai.plugin import build_responses_provider
from neuron_turn import NeuronTurn

from ._support import KEY


def test_the_package_exports_the_responses_provider_lazily() -> None:
    assert "OpenAIResponsesProvider" in neuron_provider_openai.__all__
    assert neuron_provider_openai.OpenAIResponsesProvider is OpenAIResponsesProvider


def test_factory_builds_a_responses_provider_with_options() -> None:
    provider = build_responses_provider("gpt-5-mini", base_url="http://localhost:8000/v1")
    assert isinstance(provider, OpenAIResponsesProvider)
    assert (provider.model, provider.base_url) == ("gpt-5-mini", "http://localhost:8000/v1")


async def test_from_plugins_reaches_the_responses_provider_by_its_name() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    turn = NeuronTurn.from_plugins(
        model="openai-responses:gpt-5-mini",
        provider_options={"api_key": KEY, "client": client},
    )
    assert isinstance(turn.provider, OpenAIResponsesProvider)
    assert turn.provider.model == "gpt-5-mini"
    assert turn.config.model == "gpt-5-mini"
    await client.aclose()
