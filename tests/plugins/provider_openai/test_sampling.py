"""The unified sampling setting on OpenAI's two APIs and the vendor presets: each API's
own fields, and only the settings each documents."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from layer0 import TurnInput
from neuron_provider_openai import OpenAIProvider, PresetProvider
from neuron_provider_openai.presets import PRESETS, Preset
from neuron_turn import NeuronTurn, NeuronTurnConfig, Sampling, UnsupportedSamplingError
from neuron_turn.loop.provider_errors import InvalidRequestError
from neuron_turn.loop.sampling import SAMPLING_SETTINGS

from ._support import KEY, Recorder, completion, json_response, provider_class, request
from ._support import named_provider as provider

# One value per setting, each different, so a body shows which became which field.
ONE: dict[str, Any] = {
    "top_p": 0.5,
    "top_k": 40,
    "stop_sequences": ("END", "STOP"),
    "seed": 7,
    "presence_penalty": 0.25,
    "frequency_penalty": -0.5,
}
SENT: dict[str, Any] = {**ONE, "stop_sequences": ["END", "STOP"]}
REFUSED = "refused"


def fields(**renamed: str) -> dict[str, str | None]:
    """Each setting's body field: OpenAI's names, `stop` for the stop sequences."""
    base: dict[str, str | None] = {name: name for name in SAMPLING_SETTINGS}
    base["stop_sequences"] = "stop"
    return {**base, **renamed}


NO_TOP_K = fields(top_k=None)

# provider -> the body field of each setting (None: refused), from each API's documentation
# (cited in presets.py and _responses_wire.py).
EXPECTED: dict[str, dict[str, str | None]] = {
    "openai": NO_TOP_K,
    "openai-responses": {name: "top_p" if name == "top_p" else None for name in SAMPLING_SETTINGS},
    "groq": NO_TOP_K,
    "deepseek": fields(top_k=None, seed=None),
    "openrouter": fields(),
    "mistral": fields(top_k=None, seed="random_seed"),
    "xai": {name: name if name in ("top_p", "seed") else None for name in SAMPLING_SETTINGS},
    "together": fields(),
    "fireworks": fields(seed=None),
    "cerebras": NO_TOP_K,
}

CASES = [(name, setting, field) for name, row in EXPECTED.items() for setting, field in row.items()]


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for preset in PRESETS:
        monkeypatch.delenv(preset.api_key_env, raising=False)


SAMPLING_KEYS = {"top_p", "top_k", "stop", "seed", "random_seed"} | {
    "presence_penalty",
    "frequency_penalty",
}


def sampling_in(body: dict[str, Any]) -> dict[str, Any]:
    return {key: body[key] for key in SAMPLING_KEYS & body.keys()}


def test_the_table_covers_every_preset_and_each_cites_its_source() -> None:
    assert set(EXPECTED) == {"openai", "openai-responses"} | {p.name for p in PRESETS}
    for preset in PRESETS:
        assert preset.sampling is not None
        assert preset.sampling.source.startswith("https://")


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_provider_takes_exactly_the_settings_its_api_documents(name: str) -> None:
    documented = {setting for setting, field in EXPECTED[name].items() if field is not None}
    assert provider_class(name).takes_sampling == documented


@pytest.mark.parametrize(("name", "setting", "field"), CASES)
def test_each_setting_becomes_the_apis_own_field(
    name: str, setting: str, field: str | None
) -> None:
    built, _ = provider(name)
    req = request(sampling=Sampling(**{setting: ONE[setting]}))
    if field is None:
        # A request built by hand (not through a turn) is refused, never sent without it.
        with pytest.raises(InvalidRequestError, match=rf"takes no sampling setting {setting}"):
            built.request_body(req)
        return
    assert sampling_in(built.request_body(req)) == {field: SENT[setting]}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_no_setting_sends_no_sampling_field(name: str) -> None:
    built, _ = provider(name)
    assert sampling_in(built.request_body(request())) == {}
    assert sampling_in(built.request_body(request(sampling=Sampling()))) == {}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_setting_taken_goes_in_one_body(name: str) -> None:
    taken = {s: ONE[s] for s, field in EXPECTED[name].items() if field is not None}
    body = provider(name)[0].request_body(request(sampling=Sampling(**taken)))
    assert sampling_in(body) == {EXPECTED[name][s]: SENT[s] for s in taken}


@pytest.mark.parametrize(
    ("name", "own"),
    [
        ("openai", {"top_p": 0.9, "stop": "X", "seed": 1}),
        ("openai-responses", {"top_p": 0.9}),
        ("mistral", {"random_seed": 1, "stop": ["X"]}),
        ("together", {"top_k": 3, "frequency_penalty": 1.5}),
    ],
)
@pytest.mark.parametrize("where", ["extra", "body_defaults"])
def test_the_apis_own_field_wins(name: str, own: dict[str, Any], where: str) -> None:
    options = {"body_defaults": own} if where == "body_defaults" else {}
    extra = own if where == "extra" else {}
    built, _ = provider(name, **options)
    taken = {s: ONE[s] for s, field in EXPECTED[name].items() if field in own}
    body = built.request_body(request(sampling=Sampling(**taken), extra=extra))
    assert sampling_in(body) == own


def test_a_field_of_the_api_the_setting_does_not_name_is_left_alone() -> None:
    built, _ = provider("openai", body_defaults={"top_p": 0.9})
    body = built.request_body(request(sampling=Sampling(seed=3)))
    assert sampling_in(body) == {"top_p": 0.9, "seed": 3}


@pytest.mark.parametrize(
    ("name", "sampling", "named"),
    [
        ("openai", Sampling(top_k=5), "top_k"),
        (
            "openai-responses",
            Sampling(top_p=0.5, seed=1, stop_sequences=["X"]),
            "stop_sequences, seed",
        ),
        ("deepseek", Sampling(seed=1), "seed"),
        ("mistral", Sampling(top_k=5), "top_k"),
        ("xai", Sampling(stop_sequences=["X"], presence_penalty=1), "stop_sequences, presence"),
        ("fireworks", Sampling(seed=1), "seed"),
        ("cerebras", Sampling(top_k=5), "top_k"),
    ],
)
def test_a_turn_setting_what_the_api_lacks_is_refused_when_made(
    name: str, sampling: Sampling, named: str
) -> None:
    built, recorder = provider(name)
    with pytest.raises(UnsupportedSamplingError, match=rf"setting\(s\) {named}"):
        NeuronTurn(built, config=NeuronTurnConfig(model="m", sampling=sampling))
    assert recorder.requests == []


ACME = Preset(
    name="acme-nosample",
    base_url="https://api.acme.example/v1",
    api_key_env="ACME_API_KEY",
    price_provider_id="acme",
)


def test_a_preset_documenting_no_sampling_takes_none() -> None:
    class AcmeProvider(PresetProvider, preset=ACME):
        """A vendor with no documented sampling fields."""

    built = AcmeProvider("a-1", api_key=KEY)
    assert AcmeProvider.takes_sampling == frozenset()
    with pytest.raises(UnsupportedSamplingError, match="set the API's own field in extra"):
        NeuronTurn(built, config=NeuronTurnConfig(sampling=Sampling(top_p=0.5)))
    with pytest.raises(InvalidRequestError, match="takes no sampling setting top_p"):
        built.request_body(request(sampling=Sampling(top_p=0.5)))


async def test_a_mistral_turn_sends_its_own_fields_over_http() -> None:
    recorder = Recorder(json_response(completion("Paris.", model="mistral-small-latest")))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    sampling = Sampling(top_p=0.8, seed=11, stop_sequences=["\n\n"], frequency_penalty=0.3)
    turn = NeuronTurn.from_plugins(
        model="mistral:mistral-small-latest",
        config=NeuronTurnConfig(sampling=sampling),
        provider_options={"api_key": KEY, "client": client},
    )
    await turn.execute(TurnInput(message="Capital of France?", trigger="user"))
    [sent] = recorder.requests
    assert str(sent.url) == "https://api.mistral.ai/v1/chat/completions"
    assert sampling_in(json.loads(sent.content)) == {
        "top_p": 0.8,
        "random_seed": 11,
        "stop": ["\n\n"],
        "frequency_penalty": 0.3,
    }
    await client.aclose()


async def test_an_openai_turn_sends_stop_and_seed_over_http() -> None:
    recorder = Recorder(json_response(completion("4")))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    sampling = Sampling(stop_sequences=["END"], seed=42, presence_penalty=0.5)
    turn = NeuronTurn(
        OpenAIProvider("gpt-4o-mini", api_key=KEY, client=client),
        config=NeuronTurnConfig(sampling=sampling),
    )
    await turn.execute(TurnInput(message="2+2?", trigger="user"))
    sent = json.loads(recorder.requests[0].content)
    assert sampling_in(sent) == {"stop": ["END"], "seed": 42, "presence_penalty": 0.5}
    await client.aclose()
