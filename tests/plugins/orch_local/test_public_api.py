from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import neuron_orch_local

# ruff's RUF022 keeps `__all__` sorted; this checks it is complete.
PUBLIC_MODULES = [
    "dispatcher",
    "chain",
    "checks",
    "custom",
    "errors",
    "handoff",
    "log",
    "orchestrator",
    "query",
    "result",
    "workflow",
]


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_module_name_is_exported_from_the_package(module: str) -> None:
    names = importlib.import_module(f"neuron_orch_local.{module}").__all__
    assert set(names) <= set(neuron_orch_local.__all__)


def test_every_exported_name_exists_once() -> None:
    exported = neuron_orch_local.__all__
    assert len(exported) == len(set(exported))
    for name in exported:
        assert hasattr(neuron_orch_local, name)


def test_importing_the_package_pulls_in_no_orchestration_engine() -> None:
    # Other orchestrators import it for its conventions (neuron-orch-temporal, even
    # inside workflow sandboxes): it must stay as light as layer0 and pydantic.
    code = (
        "import sys, neuron_orch_local; "
        "print(sorted({m.split('.')[0] for m in sys.modules} "
        "& {'temporalio', 'neuron_turn', 'neuron_orch_temporal'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
