"""The neuron-turn plugin: registers `PostgresStore` as the state store `"postgres"`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neuron_turn import hookimpl

from .store import PostgresStore

if TYPE_CHECKING:
    from neuron_turn.plugins.hookspecs import RegisterStateStore


@hookimpl
def register_state_stores(register: RegisterStateStore) -> None:
    """Offer `PostgresStore(conninfo, **options)` under the name `postgres`."""
    register("postgres", PostgresStore)
