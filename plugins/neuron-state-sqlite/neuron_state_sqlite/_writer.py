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
import atexit
import sqlite3
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any, Final, TypeAlias, TypeVar, cast

from . import _db
from ._threads import ThreadsClosed

__all__ = ["WriterThread"]

T = TypeVar("T")

MAX_GROUP: Final = 64
"""The most writes one transaction takes, so that one group holds the file's lock briefly."""

_Call: TypeAlias = Callable[[sqlite3.Connection], Any]
# A job: the caller's loop and future, and either the ops of a write or a call.
_Job: TypeAlias = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Sequence[_db.Op] | _Call]
# A settled job: its future, and its error or else its value.
_Settled: TypeAlias = tuple["asyncio.Future[Any]", BaseException | None, object]

# The queues of the threads still running, so that at exit each finishes the
# writes already submitted (a daemon thread would otherwise stop mid-commit).
_RUNNING: Final[weakref.WeakKeyDictionary[threading.Thread, SimpleQueue[_Job | None]]] = (
    weakref.WeakKeyDictionary()
)


class WriterThread:
    """One thread owning the writing connection, opened lazily with `connect`."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], *, path: Path, name: str) -> None:
        self._connect = connect
        self._path = path
        self._name = name
        self._jobs: SimpleQueue[_Job | None] = SimpleQueue()
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
        # The thread refers to the queue and the opener, never to `self`, so
        # a store dropped without `close()` can still be collected.
        thread = threading.Thread(
            target=_serve,
            args=(self._jobs, self._connect, self._path),
            name=self._name,
            daemon=True,
        )
        _RUNNING[thread] = self._jobs
        weakref.finalize(self, self._jobs.put, None)
        thread.start()
        self._thread = thread


def _serve(
    jobs: SimpleQueue[_Job | None], connect: Callable[[], sqlite3.Connection], path: Path
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
        _refuse_rest(jobs)


def _take(jobs: SimpleQueue[_Job | None]) -> tuple[list[_Job], bool]:
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
    batch: list[_Job],
    connection: sqlite3.Connection | None,
    connect: Callable[[], sqlite3.Connection],
    path: Path,
) -> sqlite3.Connection | None:
    """Run `batch` in order: each call alone, each run of writes as one group."""
    # A job whose caller was cancelled before it started never runs.
    live = [job for job in batch if not job[1].cancelled()]
    if not live:
        return connection
    if connection is None:
        try:
            connection = connect()
        except BaseException as exc:
            _settle([(future, exc, None) for _, future, _ in live], live)
            return None
    start = 0
    while start < len(live):
        work = live[start][2]
        if callable(work):
            end = start + 1
            settled = [_call(live[start][1], work, connection)]
        else:
            end = start + 1
            while end < len(live) and not callable(live[end][2]):
                end += 1
            settled = _write(live[start:end], connection, path)
        _settle(settled, live[start:end])
        start = end
    return connection


def _call(future: asyncio.Future[Any], fn: _Call, connection: sqlite3.Connection) -> _Settled:
    try:
        return future, None, fn(connection)
    except BaseException as exc:
        return future, exc, None


def _write(group: list[_Job], connection: sqlite3.Connection, path: Path) -> list[_Settled]:
    """Apply a group of writes: alone in its transaction when it is the only one."""
    if len(group) == 1:
        _, future, ops = group[0]
        try:
            return [(future, None, _db.apply(connection, cast(Sequence[_db.Op], ops), path=path))]
        except BaseException as exc:
            return [(future, exc, None)]
    outcomes = _db.apply_group(
        connection, [cast(Sequence[_db.Op], ops) for _, _, ops in group], path=path
    )
    return [
        (future, outcome, None) if isinstance(outcome, BaseException) else (future, None, outcome)
        for (_, future, _), outcome in zip(group, outcomes, strict=True)
    ]


def _settle(settled: list[_Settled], jobs: list[_Job]) -> None:
    """Hand the results back: one callback per event loop, however many jobs."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_Settled]] = {}
    for (loop, _, _), one in zip(jobs, settled, strict=True):
        by_loop.setdefault(loop, []).append(one)
    for loop, results in by_loop.items():
        try:
            loop.call_soon_threadsafe(_resolve, results)
        except RuntimeError:
            pass  # the loop is closed: nobody is waiting for these results any more


def _resolve(results: list[_Settled]) -> None:
    """Resolve the futures, in the loop's thread; a cancelled caller's result is dropped."""
    for future, error, value in results:
        if future.done():
            continue
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)


def _refuse_rest(jobs: SimpleQueue[_Job | None]) -> None:
    """Fail whatever was submitted after the stop (a race with `close`), rather than hang it."""
    while True:
        try:
            job = jobs.get_nowait()
        except Empty:
            return
        if job is not None:
            _settle([(job[1], ThreadsClosed("closed"), None)], [job])


@atexit.register
def _finish_at_exit() -> None:
    """Let every writer thread finish the writes already submitted before the process ends."""
    for thread, jobs in list(_RUNNING.items()):
        jobs.put(None)
        thread.join()
