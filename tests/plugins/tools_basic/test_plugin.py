"""The entry point registers `calculator`, `clock`, `shell` and `python`; turns use them by name."""

from __future__ import annotations

from importlib.metadata import entry_points

from neuron_tool import ToolDyn
from neuron_tools_basic import calculator, clock, plugin, python, shell
from neuron_turn import plugins


def registered() -> list[ToolDyn]:
    found: list[ToolDyn] = []
    plugin.register_tools(found.append)
    return found


def test_entry_point_points_at_the_plugin_module() -> None:
    (ep,) = [ep for ep in entry_points(group="neuron_turn") if ep.name == "tools-basic"]
    assert ep.value == "neuron_tools_basic.plugin"
    assert ep.dist is not None and ep.dist.name == "neuron-tools-basic"
    assert ep.load() is plugin


def test_register_tools_offers_the_calculator_the_clock_and_the_sandboxed_tools() -> None:
    assert registered() == [calculator, clock, shell, python]


def test_installed_plugins_offer_both_tools_by_name() -> None:
    assert plugins.tools_by_name(["calculator", "clock"]) == [calculator, clock]
