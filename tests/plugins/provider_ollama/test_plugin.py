from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import pluggy

from neuron_provider_ollama import OllamaProvider, plugin
from neuron_turn.plugins import hookspecs


def test_entry_point_is_declared_in_the_neuron_turn_group() -> None:
    [ep] = [ep for ep in entry_points(group="neuron_turn") if ep.name == "provider-ollama"]
    assert ep.value == "neuron_provider_ollama.plugin"
    assert ep.dist is not None
    assert ep.dist.name == "neuron-provider-ollama"


def test_plugin_registers_ollama_with_a_factory_building_the_provider() -> None:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(plugin, name="provider-ollama")
    manager.check_pending()
    registered: dict[str, Callable[..., Any]] = {}

    def register(name: str, factory: Callable[..., Any], /, *, aliases: Any = ()) -> None:
        registered[name] = factory

    manager.hook.register_providers(register=register)
    assert list(registered) == ["ollama"]
    provider = registered["ollama"]("qwen2.5", base_url="gpu-box:9000", stream=True)
    assert isinstance(provider, OllamaProvider)
    assert (provider.model, provider.base_url, provider.stream_by_default) == (
        "qwen2.5",
        "http://gpu-box:9000",
        True,
    )


def test_loading_the_entry_point_does_not_import_httpx_or_the_provider() -> None:
    code = (
        "import sys, neuron_provider_ollama.plugin as p\n"
        "assert hasattr(p, 'register_providers')\n"
        "print('httpx' in sys.modules, 'neuron_provider_ollama.provider' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["False", "False"]
