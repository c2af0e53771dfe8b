"""`google:<model>` through the plugin: the entry point, registration, options, the public names."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import httpx

import neuron_provider_google
from neuron_provider_google import GoogleProvider
from neuron_provider_google.plugin import build_provider
from neuron_turn import NeuronTurn
from neuron_turn.plugins import PluginManager, PluginSettings

from ._support import KEY

SCRIPTS = Path(sys.executable).parent


def test_the_distribution_declares_its_entry_point() -> None:
    (entry_point,) = [
        ep
        for ep in importlib.metadata.entry_points(group="neuron_turn")
        if ep.name == "provider-google"
    ]
    assert entry_point.value == "neuron_provider_google.plugin"
    assert entry_point.dist is not None and entry_point.dist.name == "neuron-provider-google"


def test_the_plugin_registers_the_google_provider_through_its_entry_point() -> None:
    manager = PluginManager()
    manager.load_entry_points(PluginSettings(load=frozenset({"neuron-provider-google"})))
    assert manager.failures == ()
    (info,) = [info for info in manager.plugins() if info.name == "provider-google"]
    assert info.registered["providers"] == ("google",)
    assert isinstance(manager.get_provider("google:gemini-2.5-flash"), GoogleProvider)


def test_the_package_exports_the_provider_lazily() -> None:
    assert neuron_provider_google.__all__ == sorted(neuron_provider_google.__all__)
    assert neuron_provider_google.GoogleProvider is GoogleProvider


def test_listing_plugins_does_not_import_httpx() -> None:
    code = (
        "import sys, neuron_provider_google.plugin; "
        "print('httpx' in sys.modules, 'genai_prices' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "False"], done.stderr


def test_factory_builds_a_provider_with_options() -> None:
    provider = build_provider("gemini-2.5-pro", base_url="https://proxy.example.com/v1beta")
    assert isinstance(provider, GoogleProvider)
    assert (provider.model, provider.base_url) == (
        "gemini-2.5-pro",
        "https://proxy.example.com/v1beta",
    )


async def test_from_plugins_reaches_the_provider_by_its_name() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    turn = NeuronTurn.from_plugins(
        model="google:gemini-2.5-flash",
        provider_options={"api_key": KEY, "client": client},
    )
    assert isinstance(turn.provider, GoogleProvider)
    assert turn.provider.model == "gemini-2.5-flash"
    assert turn.config.model == "gemini-2.5-flash"
    await client.aclose()


def test_the_command_line_lists_the_google_provider() -> None:
    env = {**os.environ, "NEURON_LOAD_PLUGINS": "neuron-provider-google"}
    done = subprocess.run(
        [str(SCRIPTS / "neuron-turn"), "plugins"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "provider-google" in done.stdout and "google" in done.stdout
