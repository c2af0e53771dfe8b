from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points

from layer0 import Orchestrator
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_temporal import TemporalOrchestrator, plugin


def test_register_orchestrators_offers_temporal() -> None:
    registered: list[tuple[str, Callable[..., Orchestrator]]] = []

    def register(name: str, factory: Callable[..., Orchestrator], /) -> None:
        registered.append((name, factory))

    plugin.register_orchestrators(register)
    assert registered == [("temporal", plugin.create_orchestrator)]


def test_the_factory_ignores_agents_and_store_and_does_not_connect() -> None:
    built = plugin.create_orchestrator(
        agents={"echo": EchoTurn()},
        store=InMemoryStore(),
        address="temporal.example:7233",
        task_queue="q",
    )
    assert isinstance(built, TemporalOrchestrator)
    assert isinstance(built, Orchestrator)
    assert repr(built) == "TemporalOrchestrator(address='temporal.example:7233', task_queue='q')"


def test_the_entry_point_points_at_the_plugin_module() -> None:
    (point,) = entry_points(group="neuron_turn", name="orch-temporal")
    assert point.value == "neuron_orch_temporal.plugin"
    assert point.load() is plugin


def test_loading_the_plugin_does_not_import_temporalio() -> None:
    code = (
        "import sys, neuron_orch_temporal.plugin; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'temporalio'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
