"""Worker threads that each own one sqlite3 connection.

Why threads of our own rather than `asyncio.to_thread` and a lock: callers
waiting for the database then wait in a queue, not in a borrowed thread of
the loop's default executor, so 200 concurrent writes cannot starve other
users of `to_thread`. And since a connection is only ever used by the thread
that opened it, it needs no lock at all.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["ConnectionThreads", "ThreadsClosed"]

T = TypeVar("T")


class ThreadsClosed(RuntimeError):
    """Work was submitted after `close()`."""


class ConnectionThreads:
    """A fixed set of threads, each lazily opening its own connection with `connect`."""

    def __init__(
        self, connect: Callable[[], sqlite3.Connection], *, threads: int, name: str
    ) -> None:
        self._connect = connect
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._closed = False

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Return `fn(connection)`, called in one of the threads.

        Cancelling the caller never stops `fn` half-way: if it has not started
        it never runs, otherwise it finishes and only its result is dropped.
        """
        if self._closed:
            raise ThreadsClosed("closed")
        # Submitting is synchronous, so no `close_soon()` can slip in between.
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._call, fn)

    def close_soon(self) -> None:
        """Refuse new work from now on; work already submitted still runs."""
        self._closed = True

    def close(self) -> None:
        """Finish queued work, stop the threads and close their connections (blocking)."""
        self._closed = True
        self._executor.shutdown(wait=True)
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()

    def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on this thread's connection, opening it on first use."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._connect()
            self._local.connection = connection
            with self._connections_lock:
                self._connections.append(connection)
        return fn(connection)
