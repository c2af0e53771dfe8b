"""The entry point registers `local`; listing plugins loads nothing heavy."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

import neuron_provider_local
from neuron_provider_local import LocalProvider, plugin
from neuron_turn import NeuronTurn, plugins


def registered() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}

    def register(name: str, factory: Callable[..., Any], /, *, aliases: Any = ()) -> None:
        found[name] = factory

    plugin.register_providers(register)
    return found


def test_entry_point_points_at_the_plugin_module() -> None:
    (ep,) = [ep for ep in entry_points(group="neuron_turn") if ep.name == "provider-local"]
    assert ep.value == "neuron_provider_local.plugin"
    assert ep.dist is not None and ep.dist.name == "neuron-provider-local"
    assert ep.load() is plugin


def test_register_providers_offers_local() -> None:
    assert list(registered()) == ["local"]


def test_the_factory_builds_a_provider_with_options() -> None:
    provider = registered()["local"]("m", base_url="http://127.0.0.1:1/v1", max_tokens=64)
    assert isinstance(provider, LocalProvider)
    assert (provider.model, provider.max_tokens) == ("m", 64)


def test_from_plugins_builds_a_turn_on_the_local_model(tmp_path: Path) -> None:
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    turn = NeuronTurn.from_plugins(model=f"local:{tmp_path / 'tiny.gguf'}", tools=["calculator"])
    assert isinstance(turn.provider, LocalProvider)
    assert turn.provider.served_model == "tiny.gguf"
    assert turn.tools.names() == ["calculator"]


def test_installed_plugins_build_the_local_provider() -> None:
    provider = plugins.get_provider("local:m", base_url="http://127.0.0.1:1/v1")
    assert isinstance(provider, LocalProvider)


@pytest.mark.parametrize("module", ["neuron_provider_local.plugin", "neuron_provider_local"])
def test_importing_the_plugin_loads_nothing_heavy(module: str) -> None:
    code = (
        "import sys\n"
        "import neuron_turn.plugins.hookspecs\n"
        "before = set(sys.modules)\n"
        f"import {module}\n"
        "new = set(sys.modules) - before\n"
        "heavy = sorted(m for m in new if m.split('.')[0] in"
        " {'httpx', 'xllamacpp', 'neuron_provider_openai', 'genai_prices'}"
        " or m == 'neuron_provider_local.provider')\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_public_names_resolve_lazily() -> None:
    for name in neuron_provider_local.__all__:
        assert getattr(neuron_provider_local, name) is not None
    with pytest.raises(AttributeError):
        _ = neuron_provider_local.no_such_name
