"""The store's writing thread: one connection, and one commit for the writes waiting together.

Why a thread fed by a queue rather than an executor: while one commit runs
(with `synchronous="full"`, an fsync), the writes other tasks submit wait in
the queue; the thread then takes all of them and applies them in one
transaction (`_db.apply_group`), so 200 sessions writing at once pay for a
few commits, not 200. Each write still succeeds or fails on its own, and its
caller resumes only once the commit holding it has returned. The results of
a group go back to each event loop in one `call_soon_threadsafe`, not a
concurrent future per write.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any, Final, TypeAlias, TypeVar, cast

from . import _db
from ._threads import (
    Job,
    Settled,
    ThreadsClosed,
    drop_if_in_transaction,
    refuse_rest,
    settle,
    start,
)

__all__ = ["WriterThread"]

T = TypeVar("T")

MAX_GROUP: Final = 64
"""The most writes one transaction takes, so that one group holds the file's lock briefly."""

_Call: TypeAlias = Callable[[sqlite3.Connection], Any]


class WriterThread:
    """One thread owning the writing connection, opened lazily with `connect`."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], *, path: Path, name: str) -> None:
        self._connect = connect
        self._path = path
        self._name = name
        self._jobs: SimpleQueue[Job | None] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    def apply(self, ops: Sequence[_db.Op]) -> asyncio.Future[list[int]]:
        """Submit `ops`, to be applied all or none, maybe in one commit with other writes.

        Submitted at once, in call order; the future holds each `Append`'s
        resulting length, or what `_db.apply` raises. Cancelling it never
        stops the write half-way: one not yet started never runs, one
        started is committed and only its result is dropped.
        """
        return self._submit(ops)

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]:
        """Submit `fn`, to be called with the connection on the thread between two commits."""
        return self._submit(fn)

    def close_soon(self) -> None:
        """Refuse new work from now on; work already submitted still runs."""
        self._closed = True

    def close(self) -> None:
        """Finish the submitted work, stop the thread and close its connection (blocking)."""
        self._closed = True
        thread = self._thread
        if thread is not None:
            self._jobs.put(None)
            thread.join()

    def _submit(self, work: Sequence[_db.Op] | _Call) -> asyncio.Future[Any]:
        """Queue `work` for the thread; the future resolves in the caller's event loop."""
        if self._closed:
            raise ThreadsClosed("closed")
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if self._thread is None:
            self._start()
        self._jobs.put((loop, future, work))
        return future

    def _start(self) -> None:
        self._thread = start(
            _serve, (self._jobs, self._connect, self._path), name=self._name, jobs=self._jobs
        )
        weakref.finalize(self, self._jobs.put, None)


def _serve(
    jobs: SimpleQueue[Job | None], connect: Callable[[], sqlite3.Connection], path: Path
) -> None:
    """The thread's body: take what is waiting, run it, until told to stop."""
    connection: sqlite3.Connection | None = None
    try:
        stopping = False
        while not stopping:
            batch, stopping = _take(jobs)
            if batch:
                connection = _run(batch, connection, connect, path)
    finally:
        if connection is not None:
            connection.close()
        refuse_rest(jobs)


def _take(jobs: SimpleQueue[Job | None]) -> tuple[list[Job], bool]:
    """Wait for one job, then take those waiting behind it; and whether to stop after them."""
    first = jobs.get()
    if first is None:
        return [], True
    batch = [first]
    while len(batch) < MAX_GROUP:
        try:
            job = jobs.get_nowait()
        except Empty:
            break
        if job is None:
            return batch, True
        batch.append(job)
    return batch, False


def _run(
    batch: list[Job],
    connection: sqlite3.Connection | None,
    connect: Callable[[], sqlite3.Connection],
    path: Path,
) -> sqlite3.Connection | None:
    """Run `batch` in order: each call alone, each run of writes as one group."""
    start = 0
    while start < len(batch):
        end = start + 1
        if not callable(batch[start][2]):
            while end < len(batch) and not callable(batch[end][2]):
                end += 1
        # A job whose caller was cancelled before it started never runs.
        jobs = [job for job in batch[start:end] if not job[1].cancelled()]
        start = end
        if not jobs:
            continue
        if connection is None:
            try:
                connection = connect()
            except BaseException as exc:
                settle([(future, exc, None) for _, future, _ in jobs], jobs)
                continue
        work = jobs[0][2]
        if callable(work):
            settled = [_call(jobs[0][1], work, connection)]
        else:
            settled = _write(jobs, connection, path)
        # Before the callers hear back: the file's lock is gone by then.
        connection = drop_if_in_transaction(connection)
        settle(settled, jobs)
    return connection


def _call(future: asyncio.Future[Any], fn: _Call, connection: sqlite3.Connection) -> Settled:
    try:
        return future, None, fn(connection)
    except BaseException as exc:
        return future, exc, None


def _write(group: list[Job], connection: sqlite3.Connection, path: Path) -> list[Settled]:
    """Apply a group of writes: alone in its transaction when it is the only one."""
    if len(group) == 1:
        _, future, ops = group[0]
        try:
            return [(future, None, _db.apply(connection, cast("Sequence[_db.Op]", ops), path=path))]
        except BaseException as exc:
            return [(future, exc, None)]
    try:
        outcomes = _db.apply_group(
            connection, [cast("Sequence[_db.Op]", ops) for _, _, ops in group], path=path
        )
    except BaseException as exc:
        # Not expected (`apply_group` answers each write); but an error escaping
        # here would end the thread with these callers, and every later one, waiting.
        return [(future, exc, None) for _, future, _ in group]
    return [
        (future, outcome, None) if isinstance(outcome, BaseException) else (future, None, outcome)
        for (_, future, _), outcome in zip(group, outcomes, strict=True)
    ]
