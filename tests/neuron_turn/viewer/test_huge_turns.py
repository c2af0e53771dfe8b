"""A turn too large to show whole: each text cut, the page bounded, and a note saying so.

A tool can return megabytes (a file read whole) and a turn can make thousands
of calls; shown whole, one such turn made a page a browser cannot draw (a
50 MB tool result gave 131 MB of HTML).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from layer0 import ToolCallEntry, TurnInput, TurnRecord
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response
from neuron_turn.viewer import serve_viewer
from neuron_turn.viewer.pages import turn_page

_HUGE = 4 * 1024 * 1024
_TOKEN = "test-token-0123456789abcdef"


@tool
async def read_log() -> str:
    """Read the whole log."""
    return "<" * _HUGE


async def test_a_tool_result_of_megabytes_is_cut_on_the_page_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with SqliteStore(path) as store:
        model = ScriptedProvider(
            [tool_call_response(ToolUsePart("c1", "read_log", {})), text_response("Read it.")]
        )
        turn = NeuronTurn(model, tools=ToolRegistry([read_log]), state=store)
        question = TurnInput(message="Read the log.", trigger="user", session="s")
        await LocalOrchestrator({"main": turn}, store).dispatch("main", question)
        [summary] = await store.turn_summaries(session="s")

    async with SqliteStore(path, read_only=True) as records:
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        serving = asyncio.create_task(
            serve_viewer(records, token=_TOKEN, on_ready=ready.set_result)
        )
        try:
            base = (await ready).removesuffix(f"/?token={_TOKEN}")
            headers = {"Authorization": f"Bearer {_TOKEN}"}
            async with httpx.AsyncClient(base_url=base, headers=headers) as http:
                page = await http.get(f"/turns/{summary.turn_id}")
        finally:
            serving.cancel()
            await asyncio.wait([serving])

    assert page.status_code == 200
    assert len(page.content) < 1024 * 1024
    assert "&lt;" * 1000 in page.text
    assert f"{_HUGE + len('[result] '):,} characters in all, the first 16,000 shown" in page.text
    assert f"neuron-turn show {summary.turn_id} --json" in page.text


def test_a_turn_of_thousands_of_calls_keeps_its_page_bounded() -> None:
    calls = [
        ToolCallEntry(
            id=f"c{n}",
            name="read",
            input={"n": n},
            output="x" * 16_000,
            is_error=False,
            start=n,
            duration=1,
        )
        for n in range(2000)
    ]
    record = TurnRecord(
        turn_id="t",
        agent="a",
        workflow_id="w",
        started="2026-01-01T00:00:00.000+00:00",
        input=TurnInput(message="hi", trigger="user"),
        timeline=calls,
        status="executed",
    )

    page = turn_page(record, where="")

    assert len(page) < 8 * 1024 * 1024
    assert page.count('data-kind="tool"') == 2000
    assert "not shown: the page already shows" in page
