"""Named OpenAI-compatible presets (`groq:`, `deepseek:`, `xai:`...): URL, key, prices, quirks."""

from __future__ import annotations

import json
import logging
from decimal import Decimal
from typing import Any

import httpx
import pytest
from genai_prices import Usage, calc_price

from neuron_provider_openai import PresetProvider
from neuron_provider_openai.preset_providers import (
    DeepSeekProvider,
    GroqProvider,
    MistralProvider,
    XaiProvider,
    preset_provider_class,
)
from neuron_provider_openai.presets import PRESETS, Preset, get_preset
from neuron_turn import NeuronTurn
from neuron_turn.cli import main
from neuron_turn.loop.provider import ProviderMessage, TextPart, ThinkingPart
from neuron_turn.loop.provider_errors import ProviderAuthenticationError, ProviderServerError
from neuron_turn.plugins import PluginManager, PluginSettings, reset_plugin_manager

from ._support import KEY, Recorder, completion, json_response, request, user

NAMES = [preset.name for preset in PRESETS]

PRICED_MODELS = {
    "groq": "llama-3.3-70b-versatile",
    "deepseek": "deepseek-chat",
    "openrouter": "openai/gpt-4o-mini",
    "mistral": "mistral-small-latest",
    "xai": "grok-3",
    "together": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    "fireworks": "accounts/fireworks/models/gpt-oss-120b",
    "cerebras": "gpt-oss-120b",
}
"""One model per vendor that genai-prices knows under the vendor's id."""


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No vendor key, no OpenAI key or URL from the machine running the tests."""
    for preset in PRESETS:
        monkeypatch.delenv(preset.api_key_env, raising=False)
        if preset.base_url_env:
            monkeypatch.delenv(preset.base_url_env, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def built(name: str, *responses: httpx.Response, **options: Any) -> tuple[PresetProvider, Recorder]:
    """Preset `name`'s provider over a MockTransport (default: one text reply)."""
    recorder = Recorder(*(responses or (json_response(completion()),)))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    return preset_provider_class(name)("some-model", client=client, **options), recorder


# --- registration -------------------------------------------------------------------


def test_the_plugin_registers_every_preset_and_alias_through_its_entry_point() -> None:
    manager = PluginManager()
    manager.load_entry_points(PluginSettings(load=frozenset({"neuron-provider-openai"})))
    assert manager.failures == ()
    (info,) = [info for info in manager.plugins() if info.name == "provider-openai"]
    names = [name for preset in PRESETS for name in (preset.name, *preset.aliases)]
    assert info.registered["providers"] == ("openai", "openai-responses", *names)
    for name in names:
        provider = manager.get_provider(f"{name}:some-model")
        assert type(provider) is preset_provider_class(name)
        assert provider.model == "some-model"


@pytest.mark.parametrize("model", ["groq:llama-3.3-70b-versatile", "grok:grok-3", "xai:grok-3"])
async def test_from_plugins_builds_the_preset_by_its_name_or_alias(model: str) -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    turn = NeuronTurn.from_plugins(model=model, provider_options={"api_key": KEY, "client": client})
    name, _, model_name = model.partition(":")
    assert isinstance(turn.provider, preset_provider_class(name))
    assert turn.provider.model == model_name
    await client.aclose()


def test_xai_answers_to_grok_too_and_names_itself_xai() -> None:
    assert get_preset("grok") is get_preset("xai")
    assert preset_provider_class("grok") is XaiProvider
    assert XaiProvider.name == "xai"


def test_an_unknown_preset_is_a_lookup_error_listing_the_known_ones() -> None:
    with pytest.raises(LookupError, match="'groc'; known: cerebras, deepseek"):
        get_preset("groc")


def test_presets_use_genai_prices_ids_that_exist() -> None:
    from genai_prices import data

    known = {provider.id for provider in data.providers}
    assert {preset.price_provider_id for preset in PRESETS} <= known


def test_the_bare_base_class_names_no_vendor() -> None:
    with pytest.raises(TypeError, match="names no vendor"):
        PresetProvider("m")


async def test_a_new_preset_is_one_subclass() -> None:
    acme = Preset(
        name="acme",
        base_url="https://api.acme.example/v1",
        api_key_env="ACME_API_KEY",
        price_provider_id="acme",
        max_tokens_field="max_tokens",
    )

    class AcmeProvider(PresetProvider, preset=acme):
        """Acme's Chat Completions API."""

    recorder = Recorder(json_response(completion()))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = AcmeProvider("a-1", api_key=KEY, client=client)
    await provider.complete(request(model="a-1", max_tokens=5))
    assert str(recorder.requests[0].url) == "https://api.acme.example/v1/chat/completions"
    assert recorder.body["max_tokens"] == 5


# --- the call: URL and key ------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
async def test_posts_to_the_vendor_url_with_the_key_from_its_own_variable(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = get_preset(name)
    monkeypatch.setenv(preset.api_key_env, KEY)
    provider, recorder = built(name)
    await provider.complete(request(model="some-model"))
    sent = recorder.requests[0]
    assert str(sent.url) == f"{preset.base_url}/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("name", NAMES)
async def test_a_missing_key_names_the_vendor_variable_and_sends_nothing(name: str) -> None:
    preset = get_preset(name)
    provider, recorder = built(name)
    with pytest.raises(ProviderAuthenticationError) as info:
        await provider.complete(request(model="some-model"))
    assert f"set the {preset.api_key_env} environment variable" in str(info.value)
    assert info.value.provider == name
    assert recorder.requests == []


@pytest.mark.parametrize("name", NAMES)
async def test_openai_api_key_alone_is_never_sent_to_another_vendor(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    provider, recorder = built(name)
    with pytest.raises(ProviderAuthenticationError, match=get_preset(name).api_key_env):
        await provider.complete(request(model="some-model"))
    assert recorder.requests == []


@pytest.mark.parametrize("name", NAMES)
async def test_openai_base_url_does_not_move_a_preset(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example.com/v1")
    provider, _ = built(name, api_key=KEY)
    assert provider.base_url == get_preset(name).base_url


@pytest.mark.parametrize("name", NAMES)
async def test_base_url_option_overrides_and_still_requires_the_vendor_key(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gateway = "https://gateway.example.com/v1"
    keyless, _ = built(name, base_url=gateway)
    with pytest.raises(ProviderAuthenticationError):
        await keyless.complete(request(model="some-model"))
    monkeypatch.setenv(get_preset(name).api_key_env, KEY)
    provider, recorder = built(name, base_url=gateway + "/")
    await provider.complete(request(model="some-model"))
    sent = recorder.requests[0]
    assert str(sent.url) == f"{gateway}/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"


WITH_URL_VARIABLE = [preset.name for preset in PRESETS if preset.base_url_env]


def test_together_reads_its_sdks_base_url_variable() -> None:
    assert WITH_URL_VARIABLE == ["together"]
    assert get_preset("together").base_url_env == "TOGETHER_BASE_URL"


@pytest.mark.parametrize("name", WITH_URL_VARIABLE)
async def test_the_base_url_variable_moves_the_preset_and_the_option_wins(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    variable = get_preset(name).base_url_env
    assert variable is not None
    monkeypatch.setenv(variable, "https://eu.example.com/v1")
    provider, recorder = built(name, api_key=KEY)
    await provider.complete(request(model="some-model"))
    assert str(recorder.requests[0].url) == "https://eu.example.com/v1/chat/completions"
    option, _ = built(name, api_key=KEY, base_url="https://option.example.com/v1")
    assert option.base_url == "https://option.example.com/v1"


@pytest.mark.parametrize("name", NAMES)
async def test_errors_name_the_vendor(name: str) -> None:
    provider, _ = built(name, json_response({"error": {"message": "down"}}, 500), api_key=KEY)
    with pytest.raises(ProviderServerError) as info:
        await provider.complete(request(model="some-model"))
    assert info.value.provider == name
    assert str(info.value).startswith(f"{name}:")


# --- pricing ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
async def test_cost_comes_from_genai_prices_under_the_vendor_id(name: str) -> None:
    model = PRICED_MODELS[name]
    usage = {"prompt_tokens": 2000, "completion_tokens": 300, "total_tokens": 2300}
    answer = json_response(completion(model=model, usage=usage))
    provider, _ = built(name, answer, api_key=KEY)
    response = await provider.complete(request(model=model))
    expected = calc_price(
        Usage(input_tokens=2000, output_tokens=300),
        model,
        provider_id=get_preset(name).price_provider_id,
    ).total_price
    assert response.cost is not None
    assert response.cost.amount == expected > 0


@pytest.mark.parametrize("name", NAMES)
async def test_a_model_genai_prices_does_not_know_costs_none(name: str) -> None:
    answer = json_response(completion(model="no-such-model-xyz"))
    provider, _ = built(name, answer, api_key=KEY)
    response = await provider.complete(request(model="no-such-model-xyz"))
    assert response.cost is None


async def test_a_gateway_base_url_keeps_the_vendor_prices() -> None:
    answer = json_response(completion(model="deepseek-chat"))
    provider, _ = built("deepseek", answer, api_key=KEY, base_url="https://gw.example.com/v1")
    response = await provider.complete(request(model="deepseek-chat"))
    assert response.cost is not None and response.cost.amount > 0


async def test_prices_option_wins_over_genai_prices() -> None:
    answer = json_response(completion(model="grok-3"))
    prices = {"grok-3": {"input_mtok": "1", "output_mtok": "1"}}
    provider, _ = built("xai", answer, api_key=KEY, prices=prices)
    response = await provider.complete(request(model="grok-3"))
    assert response.cost is not None
    assert response.cost.amount == Decimal(32) / Decimal(1_000_000)


# --- quirks -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
async def test_max_tokens_goes_in_the_field_the_vendor_reads(name: str) -> None:
    provider, recorder = built(name, api_key=KEY)
    await provider.complete(request(model="some-model", max_tokens=64))
    field = get_preset(name).max_tokens_field
    assert recorder.body[field] == 64
    other = {"max_tokens", "max_completion_tokens"} - {field}
    assert not other & set(recorder.body)


async def test_an_option_wins_over_the_preset_quirk() -> None:
    provider, recorder = built("deepseek", api_key=KEY, max_tokens_field="max_completion_tokens")
    await provider.complete(request(model="deepseek-chat", max_tokens=64))
    assert recorder.body["max_completion_tokens"] == 64


def sse(*chunks: dict[str, Any]) -> httpx.Response:
    lines = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
    return httpx.Response(200, text=lines + "data: [DONE]\n\n")


def chunk(delta: dict[str, Any], finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "mistral-small-latest",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **fields,
    }


async def test_mistral_streams_without_stream_options_and_still_reads_the_usage() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    answer = sse(
        chunk({"role": "assistant", "content": "Hi"}),
        chunk({"content": "!"}, "stop", usage=usage),
    )
    provider, recorder = built("mistral", answer, api_key=KEY, stream=True)
    response = await provider.complete(request(model="mistral-small-latest"))
    assert recorder.body["stream"] is True
    assert "stream_options" not in recorder.body
    assert response.content == [TextPart("Hi!")]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 2)
    assert isinstance(provider, MistralProvider)


@pytest.mark.parametrize("name", [n for n in NAMES if get_preset(n).stream_usage])
async def test_other_vendors_ask_for_the_usage_of_a_stream(name: str) -> None:
    answer = sse(chunk({"role": "assistant", "content": "Hi"}, "stop"))
    provider, recorder = built(name, answer, api_key=KEY, stream=True)
    await provider.complete(request(model="some-model"))
    assert recorder.body["stream_options"] == {"include_usage": True}


def thought_then_call() -> ProviderMessage:
    return ProviderMessage("assistant", [ThinkingPart("Look it up."), TextPart("Checking.")])


async def test_deepseek_sends_reasoning_back_as_reasoning_content() -> None:
    provider, recorder = built("deepseek", api_key=KEY)
    assert isinstance(provider, DeepSeekProvider)
    await provider.complete(request(user("Hi"), thought_then_call(), user("And?")))
    assistant = recorder.body["messages"][1]
    assert assistant["reasoning_content"] == "Look it up."


async def test_groq_never_sends_reasoning_back() -> None:
    provider, recorder = built("groq", api_key=KEY)
    assert isinstance(provider, GroqProvider)
    await provider.complete(request(user("Hi"), thought_then_call(), user("And?")))
    assistant = recorder.body["messages"][1]
    assert {"reasoning", "reasoning_content"}.isdisjoint(assistant)


def test_typed_answers_default_to_tools_where_json_schema_is_not_everywhere() -> None:
    modes = {preset.name: preset_provider_class(preset.name).output_modes[0] for preset in PRESETS}
    assert modes["deepseek"] == modes["groq"] == modes["openrouter"] == "tool"
    assert "native" not in preset_provider_class("deepseek").output_modes
    assert modes["mistral"] == modes["xai"] == modes["cerebras"] == "native"


# --- secrets never leak -----------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_repr_redacts_the_key(name: str) -> None:
    provider = preset_provider_class(name)("some-model", api_key=KEY)
    text = repr(provider)
    assert KEY not in text
    assert "api_key='[REDACTED]'" in text


@pytest.mark.parametrize("name", NAMES)
async def test_the_key_never_appears_in_logs_or_errors(
    name: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(get_preset(name).api_key_env, KEY)
    echoed = {"error": {"message": f"Invalid API key: {KEY}", "type": "auth", "code": None}}
    garbage = httpx.Response(200, text=f"echo {KEY}")
    provider, _ = built(name, json_response(completion()), json_response(echoed, 401), garbage)
    errors: list[Exception] = []
    with caplog.at_level(logging.DEBUG):
        await provider.complete(request(model="some-model"))
        for _ in range(2):
            with pytest.raises(Exception) as info:
                await provider.complete(request(model="some-model"))
            errors.append(info.value)
    assert f"POST {get_preset(name).base_url}/chat/completions" in caplog.text
    assert KEY not in caplog.text
    assert isinstance(errors[0], ProviderAuthenticationError)
    for error in errors:
        assert KEY not in str(error)
        assert "[REDACTED]" in str(error)


# --- the command line -------------------------------------------------------------------


@pytest.fixture
def only_openai_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", "provider-openai,state-sqlite,orch-local")
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    reset_plugin_manager()
    yield
    reset_plugin_manager()


@pytest.mark.usefixtures("only_openai_plugin")
def test_neuron_turn_plugins_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    for preset in PRESETS:
        for name in (preset.name, *preset.aliases):
            assert name in out


@pytest.mark.usefixtures("only_openai_plugin")
@pytest.mark.parametrize(
    ("model", "variable"), [("groq:m", "GROQ_API_KEY"), ("grok:m", "XAI_API_KEY")]
)
def test_run_without_the_vendor_key_exits_5_naming_its_variable(
    model: str, variable: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert main(["run", "hi", "--model", model]) == 5
    err = capsys.readouterr().err
    assert variable in err
    assert KEY not in err
