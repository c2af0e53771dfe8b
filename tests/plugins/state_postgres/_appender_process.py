"""A separate process appending to one session: `python _appender_process.py URL SCHEMA ORDER`.

Prints `ready` once its store is open, waits for a line on stdin (so the test
starts every process at the same instant), then appends turns `t0` ... `t59`
in the ORDER given (`up` or `down`), each once, printing `done` at the end.
"""

from __future__ import annotations

import asyncio
import sys

from layer0 import HistoryAppend
from neuron_state_postgres import PostgresStore

TURNS = 60


def exchange(number: int) -> HistoryAppend:
    """The turn every process appends under the id `t<number>`: three messages."""
    turn = f"t{number}"
    return HistoryAppend(
        session="shared",
        turn_id=turn,
        messages=[{"role": "user", "content": f"{turn}.{part}"} for part in range(3)],
    )


async def main(conninfo: str, schema: str, order: str) -> None:
    numbers = range(TURNS) if order == "up" else range(TURNS - 1, -1, -1)
    async with PostgresStore(conninfo, schema=schema, max_size=4) as store:
        print("ready", flush=True)
        sys.stdin.readline()
        await asyncio.gather(*(store.append_history(exchange(number)) for number in numbers))
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
