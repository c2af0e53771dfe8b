from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

import pluggy

import neuron_state_sqlite.plugin
from layer0 import StateStore
from neuron_state_sqlite import SqliteStore
from neuron_turn.plugins import hookspecs


def test_the_entry_point_names_the_plugin_module() -> None:
    [entry_point] = [ep for ep in entry_points(group="neuron_turn") if ep.name == "state-sqlite"]
    assert entry_point.value == "neuron_state_sqlite.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "neuron-state-sqlite"
    assert entry_point.load() is neuron_state_sqlite.plugin


def test_the_plugin_registers_sqlite_store_as_sqlite() -> None:
    manager = pluggy.PluginManager("neuron_turn")
    manager.add_hookspecs(hookspecs)
    manager.register(neuron_state_sqlite.plugin, name="state-sqlite")
    manager.check_pending()
    registered: list[tuple[str, Callable[..., StateStore]]] = []

    def register(name: str, factory: Callable[..., StateStore], /) -> None:
        registered.append((name, factory))

    manager.hook.register_state_stores(register=register)
    assert registered == [("sqlite", SqliteStore)]
