from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from layer0 import Orchestrator
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import LocalOrchestrator, plugin


def test_register_orchestrators_offers_local() -> None:
    registered: list[tuple[str, Callable[..., Orchestrator]]] = []

    def register(name: str, factory: Callable[..., Orchestrator], /) -> None:
        registered.append((name, factory))

    plugin.register_orchestrators(register)
    assert registered == [("local", LocalOrchestrator)]
    factory = registered[0][1]
    built = factory(agents={"echo": EchoTurn()}, store=InMemoryStore(), max_depth=2)
    assert isinstance(built, Orchestrator)


def test_the_entry_point_points_at_the_plugin_module() -> None:
    (point,) = entry_points(group="neuron_turn", name="orch-local")
    assert point.value == "neuron_orch_local.plugin"
    assert point.load() is plugin
