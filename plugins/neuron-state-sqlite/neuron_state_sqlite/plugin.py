"""The neuron-turn plugin: registers `SqliteStore` as the state store `"sqlite"`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neuron_turn import hookimpl

from .store import SqliteStore

if TYPE_CHECKING:
    from neuron_turn.plugins.hookspecs import RegisterStateStore


@hookimpl
def register_state_stores(register: RegisterStateStore) -> None:
    """Offer `SqliteStore(**options)` under the name `sqlite`."""
    register("sqlite", SqliteStore)
