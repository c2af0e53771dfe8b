from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

import pluggy

import neuron_state_postgres.plugin
from layer0 import StateStore
from neuron_state_postgres import PostgresStore
from neuron_turn.plugins import get_plugin_manager, hookspecs


def test_the_entry_point_names_the_plugin_module() -> None:
    [entry_point] = [ep for ep in entry_points(group="neuron_turn") if ep.name == "state-postgres"]
    assert entry_point.value == "neuron_state_postgres.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "neuron-state-postgres"
    assert entry_point.load() is neuron_state_postgres.plugin


def test_the_plugin_registers_postgres_store_as_postgres() -> None:
    manager = pluggy.PluginManager("neuron_turn")
    manager.add_hookspecs(hookspecs)
    manager.register(neuron_state_postgres.plugin, name="state-postgres")
    manager.check_pending()
    registered: list[tuple[str, Callable[..., StateStore]]] = []

    def register(name: str, factory: Callable[..., StateStore], /) -> None:
        registered.append((name, factory))

    manager.hook.register_state_stores(register=register)
    assert registered == [("postgres", PostgresStore)]


async def test_the_plugin_manager_builds_the_store_by_name(conninfo: str, schema: str) -> None:
    store = get_plugin_manager().get_state_store("postgres", conninfo=conninfo, schema=schema)
    assert isinstance(store, PostgresStore)
    async with store:
        await store.write("global", "k", 1)
        assert await store.read("global", "k") == 1
