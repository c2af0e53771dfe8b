"""Fixtures the command-line tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from neuron_turn.plugins import reset_plugin_manager

CLI_PLUGINS: Final = "fixture-plugin,state-sqlite,orch-local"
"""The fixture provider, and the store and orchestrator `run` dispatches through."""


@pytest.fixture
def fixture_plugins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Load only `CLI_PLUGINS`, with a state file of the test's own, for in-process `main`."""
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", CLI_PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    monkeypatch.delenv("NEURON_STRICT_PLUGINS", raising=False)
    reset_plugin_manager()
    yield
    reset_plugin_manager()
