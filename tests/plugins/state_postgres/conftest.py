from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from neuron_state_postgres import PostgresStore
from neuron_state_sqlite import SqliteStore

from ._server import Server, postgres_server

__all__ = ["AnyStore", "postgres_server"]

AnyStore = SqliteStore | PostgresStore


@pytest.fixture
def schema() -> str:
    """A schema no other test uses, so each test starts from an empty store."""
    return f"t_{uuid.uuid4().hex}"


@pytest.fixture
def conninfo(postgres_server: Server) -> str:
    return postgres_server.conninfo()


@pytest.fixture
async def store(conninfo: str, schema: str) -> AsyncIterator[PostgresStore]:
    async with PostgresStore(conninfo, schema=schema) as opened:
        yield opened


@pytest.fixture(params=["sqlite", "postgres"])
async def any_store(
    request: pytest.FixtureRequest, tmp_path: Path, conninfo: str, schema: str
) -> AsyncIterator[AnyStore]:
    """Each store the contract tests hold to: the same calls, the same answers."""
    opened: SqliteStore | PostgresStore
    if request.param == "sqlite":
        opened = SqliteStore(tmp_path / "state.db")
    else:
        opened = PostgresStore(conninfo, schema=schema)
    async with opened:
        yield opened


@pytest.fixture
def postgres_server_port(postgres_server: Server) -> int:
    return postgres_server.port
