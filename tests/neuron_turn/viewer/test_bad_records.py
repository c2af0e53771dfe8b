"""A stored record that does not parse: its pages say so, the other pages are untouched.

A state file edited by hand, damaged, or written by a newer version can hold
a record this version cannot read; the pages that need it answered a bare
"Internal Server Error" without the viewer's security headers.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from layer0 import TurnInput
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_turn import NeuronTurn
from neuron_turn.testing import ScriptedProvider, text_response
from neuron_turn.viewer import serve_viewer

_TOKEN = "test-token-0123456789abcdef"


@dataclass(frozen=True)
class _Damaged:
    http: httpx.AsyncClient
    bad: str
    """The turn whose record and summary do not parse (session `bad`)."""


@pytest.fixture
async def damaged(tmp_path: Path) -> AsyncIterator[_Damaged]:
    path = tmp_path / "state.db"
    async with SqliteStore(path) as store:
        for session in ("good", "bad"):
            turn = NeuronTurn(ScriptedProvider([text_response("hi")]), state=store)
            question = TurnInput(message="q", trigger="user", session=session)
            await LocalOrchestrator({"main": turn}, store).dispatch("main", question)
    with sqlite3.connect(path) as database:
        database.execute(
            'UPDATE turns SET record = \'{"turn_id": "<svg onload=alert(1)>"}\', '
            "summary = json_set(summary, '$.status', '<script>') WHERE session = 'bad'"
        )
        [(bad,)] = database.execute("SELECT turn_id FROM turns WHERE session = 'bad'")
    database.close()
    async with SqliteStore(path, read_only=True) as records:
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        serving = asyncio.create_task(
            serve_viewer(records, token=_TOKEN, on_ready=ready.set_result)
        )
        try:
            base = (await ready).removesuffix(f"/?token={_TOKEN}")
            headers = {"Authorization": f"Bearer {_TOKEN}"}
            async with httpx.AsyncClient(base_url=base, headers=headers) as http:
                yield _Damaged(http, bad)
        finally:
            serving.cancel()
            await asyncio.wait([serving])


async def test_a_record_that_does_not_parse_gets_a_page_saying_so(damaged: _Damaged) -> None:
    for path in (f"/turns/{damaged.bad}", "/turns", "/sessions/bad"):
        page = await damaged.http.get(path)
        assert page.status_code == 500, path
        assert "content-security-policy" in page.headers, path
        assert "does not parse" in page.text, path
        assert "<script>" not in page.text and "<svg" not in page.text, path


async def test_the_other_sessions_pages_are_untouched(damaged: _Damaged) -> None:
    assert (await damaged.http.get("/")).status_code == 200
    assert (await damaged.http.get("/sessions/good")).status_code == 200
