"""Fake entry points for plugin tests: monkeypatch `importlib.metadata.entry_points`."""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass, field
from typing import Any

import pytest


@dataclass(frozen=True)
class FakeDistribution:
    name: str
    version: str


@dataclass
class FakeEntryPoint:
    name: str
    target: object
    distribution: str = ""
    version: str = "1.0.0"
    group: str = "neuron_turn"
    loads: list[str] = field(default_factory=list)

    @property
    def value(self) -> str:
        return f"{self.distribution.replace('-', '_')}.plugin"

    @property
    def dist(self) -> FakeDistribution:
        return FakeDistribution(self.distribution, self.version)

    def __post_init__(self) -> None:
        self.distribution = self.distribution or f"neuron-{self.name}"

    def load(self) -> object:
        self.loads.append(self.name)
        if isinstance(self.target, BaseException):
            raise self.target
        return self.target


def clear_plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset NEURON_LOAD_PLUGINS, NEURON_DISABLE_PLUGINS and NEURON_STRICT_PLUGINS."""
    for variable in ("NEURON_LOAD_PLUGINS", "NEURON_DISABLE_PLUGINS", "NEURON_STRICT_PLUGINS"):
        monkeypatch.delenv(variable, raising=False)


def install_entry_points(monkeypatch: pytest.MonkeyPatch, *entry_points: FakeEntryPoint) -> None:
    """Make the group `neuron_turn` list only `entry_points`."""
    original = importlib.metadata.entry_points

    def fake(**params: Any) -> Any:
        if params.get("group") != "neuron_turn":
            return original(**params)
        assert params == {"group": "neuron_turn"}
        return list(entry_points)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
