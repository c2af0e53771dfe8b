"""A state file filled by real turns through the command line, and the viewer served on it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from neuron_state_sqlite import SqliteStore
from neuron_turn.cli import main
from neuron_turn.plugins import reset_plugin_manager
from neuron_turn.viewer import serve_viewer

PLUGINS = "fixture-plugin,state-sqlite,orch-local,tools-basic"
TOKEN = "test-token-0123456789abcdef"
CALCULATOR = ["What is 17*23? Use the calculator.", "--model", "fixture:calculator"]
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"


@dataclass(frozen=True)
class Filled:
    """The state file and the ids of the turns run into it."""

    path: Path
    calculator: str
    """The README's calculator turn (session `calc`)."""
    hostile: str
    """A turn whose prompt and answer hold HTML (session `calc`, after the first)."""
    other: str
    """A turn of session `other`."""


@pytest.fixture
def filled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Filled]:
    """Three turns run with `neuron-turn run`, as a user would."""
    path = tmp_path / "state.db"
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(path))
    reset_plugin_manager()
    ids = [
        _run(*CALCULATOR, "--tool", "calculator", "--session", "calc"),
        _run(HOSTILE, "--model", "fixture:echo", "--session", "calc"),
        _run("hello", "--model", "fixture:echo", "--session", "other"),
    ]
    reset_plugin_manager()
    yield Filled(path, *ids)
    reset_plugin_manager()


def _run(*argv: str) -> str:
    assert main(["run", *argv, "--json"]) == 0
    return _last_turn()


def _last_turn() -> str:
    async def newest() -> str:
        async with SqliteStore(read_only=True) as store:
            [summary] = await store.turn_summaries(limit=1)
            return summary.turn_id

    return asyncio.run(newest())


@dataclass(frozen=True)
class Served:
    """The viewer's base URL (no token) and the token."""

    base: str
    token: str


@pytest.fixture
async def served(filled: Filled) -> AsyncIterator[Served]:
    """The viewer on a free loopback port, over the filled file opened read-only."""
    async with SqliteStore(filled.path, read_only=True) as store:
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(
            serve_viewer(store, token=TOKEN, where=str(filled.path), on_ready=ready.set_result)
        )
        try:
            url = await ready
            yield Served(url.removesuffix(f"/?token={TOKEN}"), TOKEN)
        finally:
            task.cancel()
            await asyncio.wait([task])
