from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import cast

import pytest
from temporalio.client import Client

from layer0 import Orchestrator
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_temporal import (
    DirectoryPayloadDriver,
    TemporalOrchestrator,
    TemporalWorker,
    directory_storage,
    plugin,
)
from neuron_turn import Worker


def test_register_orchestrators_offers_temporal() -> None:
    registered: list[tuple[str, Callable[..., Orchestrator]]] = []

    def register(name: str, factory: Callable[..., Orchestrator], /) -> None:
        registered.append((name, factory))

    plugin.register_orchestrators(register)
    assert registered == [("temporal", plugin.create_orchestrator)]


def test_register_workers_offers_temporal() -> None:
    registered: list[tuple[str, Callable[..., Worker]]] = []

    def register(name: str, factory: Callable[..., Worker], /) -> None:
        registered.append((name, factory))

    plugin.register_workers(register)
    assert registered == [("temporal", plugin.create_temporal_worker)]


def test_the_worker_factory_builds_a_worker_without_connecting() -> None:
    built = plugin.create_temporal_worker(address="temporal.example:7233", task_queue="q")
    assert isinstance(built, TemporalWorker)
    assert isinstance(built, Worker)
    assert repr(built) == "TemporalWorker(address='temporal.example:7233', task_queue='q')"
    assert not built.ready.is_set()


def test_the_worker_and_the_orchestrator_agree_on_defaults() -> None:
    worker = plugin.create_temporal_worker()
    assert (worker.address, worker.task_queue, worker.namespace) == (
        "127.0.0.1:7233",
        "neuron-turn",
        "default",
    )
    orchestrator = plugin.create_orchestrator()
    assert repr(orchestrator) == (
        "TemporalOrchestrator(address='127.0.0.1:7233', task_queue='neuron-turn')"
    )


@pytest.mark.parametrize(
    ("what", "module", "factory"),
    [
        ("orchestrator", "neuron_orch_temporal.orchestrator", plugin.create_orchestrator),
        ("worker", "neuron_orch_temporal.worker", plugin.create_temporal_worker),
    ],
)
def test_without_temporalio_the_factories_say_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, what: str, module: str, factory: Callable[[], object]
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # importing it now fails
    with pytest.raises(ImportError, match=f"the Temporal {what} needs temporalio") as caught:
        factory()
    assert "pip install 'neuron-orch-temporal[temporal]'" in str(caught.value)


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


def test_payload_dir_gives_the_worker_and_the_orchestrator_storage_in_that_directory(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "payloads"
    worker = plugin.create_temporal_worker(payload_dir=str(directory))
    orchestrator = plugin.create_orchestrator(payload_dir=str(directory))

    for storage in (worker.storage, orchestrator._storage):
        assert storage is not None
        (driver,) = storage.drivers
        assert isinstance(driver, DirectoryPayloadDriver) and driver.directory == directory
    assert directory.is_dir() and directory.stat().st_mode & 0o077 == 0
    assert plugin.create_temporal_worker().storage is None


def test_storage_given_with_a_client_is_refused_not_ignored(tmp_path: Path) -> None:
    client = cast(Client, object())  # never used: refused before
    with pytest.raises(ValueError, match=r"connect\(address, storage=\.\.\.\)"):
        TemporalOrchestrator(client, storage=directory_storage(tmp_path / "payloads"))
