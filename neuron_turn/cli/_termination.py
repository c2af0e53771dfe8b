"""SIGTERM stops a command as Ctrl-C does: the turn cancelled, what its tools did kept.

`timeout`, `kill`, systemd and container runtimes end a process with SIGTERM,
whose default ends Python at once: a turn under way lost the tool calls it had
made (they ran, and the session never heard of them), a chat its answer's. While
a command runs, SIGTERM is handed to the handler Ctrl-C's SIGINT has (asyncio's,
which cancels the turn so that its orchestrator keeps its part, or Python's,
which raises `KeyboardInterrupt`), so the same code stops the command and says
how to go on; `terminated()` then tells it apart from Ctrl-C. When SIGINT is
ignored (a job a shell started in the background), SIGTERM ends the process as
it always did, rather than be ignored with it.

A stop is bounded: a second SIGTERM, or the command still running `GRACE`
seconds after the first (a thread blocked in a read that never returns, which
no cancellation reaches), ends the process as SIGTERM always did, so that
`timeout` and `kill` still end it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Final

__all__ = ["GRACE", "stopped_by_sigterm_as_by_ctrl_c", "terminated"]

GRACE: Final = 30.0
"""Seconds a command stopped by SIGTERM has to end before it is ended at once."""
_TERMINATED: Final = 128 + signal.SIGTERM
"""The exit status a shell reports for a process SIGTERM ended (`_errors.EXIT_TERMINATED`)."""

_terminated = threading.Event()


def terminated() -> bool:
    """Whether SIGTERM came while the command ran."""
    return _terminated.is_set()


_grace_timers: list[threading.Timer] = []
"""The timer a first SIGTERM started, cancelled when the command ends in time."""


@contextlib.contextmanager
def stopped_by_sigterm_as_by_ctrl_c() -> Iterator[None]:
    """Run the block with SIGTERM handled as Ctrl-C (in the main thread; elsewhere, as is)."""
    _terminated.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        # The command stopped in time: no ending it later (a caller of `main` goes on).
        for timer in _grace_timers:
            timer.cancel()
        _grace_timers.clear()


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    interrupt = signal.getsignal(signal.SIGINT)
    if _terminated.is_set() or not callable(interrupt):
        # Told twice, or SIGINT ignored or left to the system: end as SIGTERM always did.
        _end_now()
        return
    _terminated.set()
    timer = threading.Timer(GRACE, _past_grace)
    timer.daemon = True  # never keeps a process that ended from exiting
    _grace_timers.append(timer)
    timer.start()
    interrupt(signal.SIGINT, frame)


def _end_now() -> None:
    """End the process as SIGTERM's default does (in the main thread, where handlers run)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _past_grace() -> None:
    """End a process the first SIGTERM did not stop within `GRACE` (from the timer's thread).

    Only the main thread may reset a handler, and it may be the one stuck: the
    process exits from here, saying so, as a process SIGTERM ended is reported.
    """
    line = f"neuron-turn: error: terminated (SIGTERM): not stopped within {GRACE:g}s, ended\n"
    with contextlib.suppress(OSError):
        os.write(2, line.encode())
    os._exit(_TERMINATED)
