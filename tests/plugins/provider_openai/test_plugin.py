"""The entry point and registration hook, and that loading the plugin stays cheap."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import neuron_provider_openai
from neuron_provider_openai import OpenAIProvider, plugin


def registered() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}

    def register(name: str, factory: Callable[..., Any], /, *, aliases: Any = ()) -> None:
        found[name] = factory

    plugin.register_providers(register)
    return found


def test_entry_point_points_at_the_plugin_module() -> None:
    (ep,) = [ep for ep in entry_points(group="neuron_turn") if ep.name == "provider-openai"]
    assert ep.value == "neuron_provider_openai.plugin"
    assert ep.load() is plugin


def test_register_providers_offers_openai_openai_responses_then_the_presets() -> None:
    assert list(registered()) == [
        "openai",
        "openai-responses",
        "groq",
        "deepseek",
        "openrouter",
        "mistral",
        "xai",
        "together",
        "fireworks",
        "cerebras",
    ]


def test_factory_builds_a_provider_for_the_model_with_options() -> None:
    provider = registered()["openai"]("gpt-4o-mini", base_url="http://localhost:8000/v1")
    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "gpt-4o-mini"
    assert provider.base_url == "http://localhost:8000/v1"


def test_importing_the_plugin_loads_neither_httpx_nor_genai_prices() -> None:
    code = (
        "import sys\n"
        "import neuron_turn.plugins.hookspecs\n"
        "before = set(sys.modules)\n"
        "import neuron_provider_openai.plugin\n"
        "new = set(sys.modules) - before\n"
        "heavy = sorted(m for m in new if m.split('.')[0] in {'httpx', 'genai_prices'}"
        " or m in ('neuron_provider_openai.provider', 'neuron_provider_openai.responses',"
        " 'neuron_provider_openai.preset_providers'))\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_public_names_are_unique_and_resolve() -> None:
    names = neuron_provider_openai.__all__  # their order is ruff's (RUF022), checked by lint
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(neuron_provider_openai, name) is not None
        assert name in dir(neuron_provider_openai)
