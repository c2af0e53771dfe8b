"""The entry point registers the three environments, and the manager builds them by name."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from layer0 import Environment
from layer0.testing import EchoTurn
from neuron_env_sandbox import LocalEnvironment, ProcessEnvironment, SandboxEnvironment, plugin
from neuron_turn import PluginManager, UnknownEnvironmentError

from ._helpers import RECIPE


def test_the_entry_point_points_at_the_plugin_module() -> None:
    (point,) = entry_points(group="neuron_turn", name="env-sandbox")
    assert point.value == "neuron_env_sandbox.plugin"
    assert point.load() is plugin


def test_get_environment_builds_each_by_name() -> None:
    manager = PluginManager()
    manager.load_entry_points()
    local = manager.get_environment("local", EchoTurn())
    assert isinstance(local, LocalEnvironment) and isinstance(local, Environment)
    assert isinstance(manager.get_environment("process", RECIPE), ProcessEnvironment)
    assert isinstance(manager.get_environment("sandbox", RECIPE), SandboxEnvironment)


def test_an_unknown_environment_names_those_there_are() -> None:
    manager = PluginManager()
    manager.load_entry_points()
    with pytest.raises(UnknownEnvironmentError, match="available: local, process, sandbox"):
        manager.get_environment("docker", RECIPE)
