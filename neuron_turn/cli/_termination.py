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
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["stopped_by_sigterm_as_by_ctrl_c", "terminated"]

_terminated = threading.Event()


def terminated() -> bool:
    """Whether SIGTERM came while the command ran."""
    return _terminated.is_set()


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


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _terminated.set()
    interrupt = signal.getsignal(signal.SIGINT)
    if callable(interrupt):
        interrupt(signal.SIGINT, frame)
        return
    # SIGINT ignored or left to the system: end as SIGTERM always ended the process.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.raise_signal(signal.SIGTERM)
