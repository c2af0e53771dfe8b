"""Several stores and OS processes appending to one session: no turn lost, none doubled."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from layer0 import HISTORY_KEY, SessionScope
from neuron_state_postgres import PostgresStore

from ._appender_process import TURNS, exchange

APPENDER = Path(__file__).with_name("_appender_process.py")
SHARED = SessionScope(id="shared")


def exchanges(history: object) -> list[list[str]]:
    """The history cut into its turns' three messages each."""
    assert isinstance(history, list)
    contents = [message["content"] for message in history]
    return [contents[i : i + 3] for i in range(0, len(contents), 3)]


def assert_each_turn_once_and_whole(history: object) -> None:
    turns = exchanges(history)
    assert sorted(turn[0] for turn in turns) == sorted(f"t{n}.0" for n in range(TURNS))
    for turn in turns:
        stem = turn[0][:-2]
        assert turn == [f"{stem}.0", f"{stem}.1", f"{stem}.2"]


async def test_two_stores_appending_the_same_turns_in_opposite_orders_keep_each_once(
    conninfo: str, schema: str
) -> None:
    async with (
        PostgresStore(conninfo, schema=schema) as one,
        PostgresStore(conninfo, schema=schema) as two,
    ):
        await asyncio.gather(
            *(one.append_history(exchange(n)) for n in range(TURNS)),
            *(two.append_history(exchange(n)) for n in reversed(range(TURNS))),
        )
        history = await one.read(SHARED, HISTORY_KEY)
    assert_each_turn_once_and_whole(history)


def test_two_processes_appending_to_one_session_lose_and_double_nothing(
    conninfo: str, schema: str
) -> None:
    processes = [
        subprocess.Popen(
            [sys.executable, str(APPENDER), conninfo, schema, order],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for order in ("up", "down")
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "ready", process.stderr
        for process in processes:
            out, err = process.communicate("go\n", timeout=60)
            assert process.returncode == 0, err
            assert out.strip() == "done"
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()

    async def read() -> object:
        async with PostgresStore(conninfo, schema=schema) as store:
            return await store.read(SHARED, HISTORY_KEY)

    assert_each_turn_once_and_whole(asyncio.run(read()))
