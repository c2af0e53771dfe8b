"""A separate process writing to a store: `python _writer_process.py DB PREFIX COUNT`.

Prints `ready` once the store is open, then waits for a line on stdin (so
the test can start several writers at the same instant), then writes keys
`PREFIX-0`, `PREFIX-1`, ... (for ever when COUNT is 0), printing each key
only after its write has committed. Prints `done` at the end.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from pathlib import Path

from pydantic import JsonValue

from layer0 import CustomScope
from neuron_state_sqlite import SqliteStore

SCOPE = CustomScope(name="processes")


def value_of(key: str) -> JsonValue:
    """The value each key is written with: big enough that a kill lands mid-write."""
    return {"key": key, "padding": key * 200}


async def main(path: Path, prefix: str, count: int) -> None:
    async with SqliteStore(path, busy_timeout=30.0) as store:
        print("ready", flush=True)
        sys.stdin.readline()
        numbers = itertools.count() if count == 0 else range(count)
        for number in numbers:
            key = f"{prefix}-{number}"
            await store.write(SCOPE, key, value_of(key))
            print(key, flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
