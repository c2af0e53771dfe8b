from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import pluggy

from neuron_provider_anthropic import AnthropicProvider, plugin
from neuron_turn.plugins import hookspecs

from ._support import API_KEY


def registered() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}

    def register(name: str, factory: Callable[..., Any], /, *, aliases: Any = ()) -> None:
        found[name] = factory

    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(plugin, name="provider-anthropic")
    manager.check_pending()
    manager.hook.register_providers(register=register)
    return found


def test_plugin_registers_the_anthropic_provider_through_the_hook() -> None:
    assert list(registered()) == ["anthropic"]


async def test_factory_builds_a_provider_for_the_model_with_the_options() -> None:
    factory = registered()["anthropic"]

    provider = factory(
        "claude-haiku-4-5", api_key=API_KEY, base_url="https://proxy.example", max_tokens=99
    )

    assert isinstance(provider, AnthropicProvider)
    assert provider.model == "claude-haiku-4-5"
    assert provider.base_url == "https://proxy.example"
    await provider.aclose()


def test_entry_point_is_declared_under_the_neuron_turn_group() -> None:
    points = {ep.name: ep for ep in entry_points(group="neuron_turn")}

    assert points["provider-anthropic"].value == "neuron_provider_anthropic.plugin"
    assert points["provider-anthropic"].load() is plugin


def test_importing_the_plugin_module_loads_neither_httpx_nor_genai_prices() -> None:
    script = (
        "import sys, json, neuron_turn\n"
        "before = set(sys.modules)\n"
        "import neuron_provider_anthropic.plugin\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    loaded = json.loads(out.stdout)

    heavy = [name for name in loaded if name.split(".")[0] in {"httpx", "genai_prices"}]
    assert heavy == []
    assert "neuron_provider_anthropic.provider" not in loaded
