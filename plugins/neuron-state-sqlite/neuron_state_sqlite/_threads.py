"""Threads that each own one sqlite3 connection, fed by a queue, answering into event loops.

Why threads of our own rather than `asyncio.to_thread` and a lock: callers
waiting for the database then wait in a queue, not in a borrowed thread of
the loop's default executor, so 200 concurrent writes cannot starve other
users of `to_thread`. And since a connection is only ever used by the thread
that opened it, it needs no lock at all.

Why not an executor: a job here is the caller's loop, its asyncio future and
the work; the thread resolves the future with one `call_soon_threadsafe`,
where `run_in_executor` builds a concurrent future (with its condition and
lock) per call and chains the two futures through callbacks.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import sqlite3
import threading
import weakref
from collections.abc import Callable
from queue import Empty, SimpleQueue
from typing import Any, Final, TypeAlias, TypeVar

__all__ = [
    "ConnectionThreads",
    "Job",
    "Settled",
    "ThreadsClosed",
    "drop_if_in_transaction",
    "refuse_rest",
    "settle",
    "start",
]

T = TypeVar("T")

Job: TypeAlias = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Any]
"""Work for a thread: the caller's event loop and future, and what to do."""

Settled: TypeAlias = tuple["asyncio.Future[Any]", BaseException | None, object]
"""A job done: its future, and its error or else its value."""

# The queues of the threads still running, so that at exit each finishes the
# work already submitted (a daemon thread would otherwise stop mid-commit).
_RUNNING: Final[weakref.WeakKeyDictionary[threading.Thread, SimpleQueue[Job | None]]] = (
    weakref.WeakKeyDictionary()
)


class ThreadsClosed(RuntimeError):
    """Work was submitted after `close()`."""


class ConnectionThreads:
    """Up to `threads` threads, each lazily opening its own connection; the last idle one works.

    Why the last idle one rather than any: a thread that has just run is
    still warm in the CPU caches, and a job handed to the longest idle of
    four (as an executor does) costs nearly twice the hand-off on a busy
    machine. Each thread has its own inbox; jobs that find none idle wait
    in a shared queue, which a thread drains before it goes idle.
    """

    def __init__(
        self, connect: Callable[[], sqlite3.Connection], *, threads: int, name: str
    ) -> None:
        self._connect = connect
        self._count = threads
        self._name = name
        self._lock = threading.Lock()
        self._waiting: collections.deque[Job] = collections.deque()
        self._idle: list[SimpleQueue[Job | None]] = []
        self._inboxes: list[SimpleQueue[Job | None]] = []
        self._threads: list[threading.Thread] = []
        self._closed = False

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]:
        """Submit `fn`, to be called with one thread's connection; its future holds the result.

        Cancelling the future never stops `fn` half-way: if it has not started
        it never runs, otherwise it finishes and only its result is dropped.
        """
        if self._closed:
            raise ThreadsClosed("closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        job: Job = (loop, future, fn)
        with self._lock:
            if self._idle:
                self._idle.pop().put(job)
            elif len(self._threads) < self._count:
                self._start().put(job)
            else:
                self._waiting.append(job)
        return future

    def close_soon(self) -> None:
        """Refuse new work from now on; work already submitted still runs."""
        self._closed = True

    def close(self) -> None:
        """Finish queued work, stop the threads and close their connections (blocking)."""
        self._closed = True
        with self._lock:
            inboxes, threads = list(self._inboxes), list(self._threads)
        for inbox in inboxes:
            inbox.put(None)
        for thread in threads:
            thread.join()

    def _start(self) -> SimpleQueue[Job | None]:
        """Start one more thread (under the lock); return its inbox."""
        inbox: SimpleQueue[Job | None] = SimpleQueue()
        args = (inbox, self._connect, self._lock, self._waiting, self._idle)
        self._threads.append(start(_serve, args, name=self._name, jobs=inbox))
        self._inboxes.append(inbox)
        weakref.finalize(self, inbox.put, None)
        return inbox


def start(
    target: Callable[..., None], args: tuple[Any, ...], *, name: str, jobs: SimpleQueue[Job | None]
) -> threading.Thread:
    """Start a daemon thread serving `jobs`, to be told to stop and joined at exit.

    `target` and `args` must not refer to the object owning the thread, so
    that one dropped without being closed can still be collected.
    """
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    _RUNNING[thread] = jobs
    thread.start()
    return thread


def settle(settled: list[Settled], jobs: list[Job]) -> None:
    """Hand results back to their callers: one callback per event loop, however many jobs."""
    by_loop: dict[asyncio.AbstractEventLoop, list[Settled]] = {}
    for (loop, _, _), one in zip(jobs, settled, strict=True):
        by_loop.setdefault(loop, []).append(one)
    for loop, results in by_loop.items():
        try:
            loop.call_soon_threadsafe(_resolve, results)
        except RuntimeError:
            pass  # the loop is closed: nobody is waiting for these results any more


def drop_if_in_transaction(connection: sqlite3.Connection) -> sqlite3.Connection | None:
    """Close `connection` if a job left it in a transaction (return None), else return it.

    Why: a job ends every transaction it begins, unless SQLite refused the
    COMMIT and then the ROLLBACK (a failing disk). Kept, such a connection
    would hold its snapshot, and a writer's the file's lock, for good: every
    later job would fail to begin, other processes could not write, and the
    WAL could not be checkpointed. Closing it undoes the transaction; the
    thread opens a new connection for its next job.
    """
    if not connection.in_transaction:
        return connection
    connection.close()
    return None


def refuse_rest(jobs: SimpleQueue[Job | None]) -> None:
    """Fail whatever is still queued (submitted in a race with `close`) rather than hang it."""
    while True:
        try:
            job = jobs.get_nowait()
        except Empty:
            return
        if job is not None:
            settle([(job[1], ThreadsClosed("closed"), None)], [job])


def _serve(
    inbox: SimpleQueue[Job | None],
    connect: Callable[[], sqlite3.Connection],
    lock: threading.Lock,
    waiting: collections.deque[Job],
    idle: list[SimpleQueue[Job | None]],
) -> None:
    """A reader thread's body: run its jobs and the waiting ones until told to stop."""
    connection: sqlite3.Connection | None = None
    try:
        job = inbox.get()
        while job is not None:
            settled, connection = _run_one(job, connection, connect)
            # Idle before the caller hears back, so that its next job comes here.
            with lock:
                following = waiting.popleft() if waiting else None
                if following is None:
                    idle.append(inbox)
            if settled is not None:
                settle([settled], [job])
            job = following if following is not None else inbox.get()
    finally:
        if connection is not None:
            connection.close()


def _run_one(
    job: Job, connection: sqlite3.Connection | None, connect: Callable[[], sqlite3.Connection]
) -> tuple[Settled | None, sqlite3.Connection | None]:
    """Run `job` unless its caller was cancelled before it started; return it and the connection."""
    future = job[1]
    if future.cancelled():
        return None, connection
    try:
        if connection is None:
            connection = connect()
        settled: Settled = (future, None, job[2](connection))
    except BaseException as exc:
        settled = (future, exc, None)
    return settled, None if connection is None else drop_if_in_transaction(connection)


def _resolve(results: list[Settled]) -> None:
    """Resolve the futures, in their loop's thread; a cancelled caller's result is dropped."""
    for future, error, value in results:
        if future.done():
            continue
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)


@atexit.register
def _finish_at_exit() -> None:
    """Let every thread finish the work already submitted before the process ends."""
    running = list(_RUNNING.items())
    # Every stop first: threads sharing a queue take whichever stop comes.
    for _, jobs in running:
        jobs.put(None)
    for thread, _ in running:
        thread.join()
