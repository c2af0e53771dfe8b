"""The tests' PostgreSQL: one throwaway cluster a session (`neuron_state_postgres.testing`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from neuron_state_postgres.testing import ThrowawayServer, free_port, throwaway_server

__all__ = ["Server", "free_port", "postgres_server"]

Server = ThrowawayServer


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """One throwaway cluster for the whole session; each test takes a schema of its own."""
    with throwaway_server() as server:
        yield server
