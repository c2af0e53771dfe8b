from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from neuron_state_sqlite import SqliteStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state.db"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[SqliteStore]:
    async with SqliteStore(db_path) as opened:
        yield opened
