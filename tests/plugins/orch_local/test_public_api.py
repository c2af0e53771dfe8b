from __future__ import annotations

import importlib

import pytest

import neuron_orch_local

# ruff's RUF022 keeps `__all__` sorted; this checks it is complete.
PUBLIC_MODULES = ["custom", "errors", "handoff", "orchestrator", "result", "workflow"]


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_module_name_is_exported_from_the_package(module: str) -> None:
    names = importlib.import_module(f"neuron_orch_local.{module}").__all__
    assert set(names) <= set(neuron_orch_local.__all__)


def test_every_exported_name_exists_once() -> None:
    exported = neuron_orch_local.__all__
    assert len(exported) == len(set(exported))
    for name in exported:
        assert hasattr(neuron_orch_local, name)
