"""Output whose reader went away (`neuron-turn run ... | head -1`): the rest dropped, the work done.

A reader that stops early (`head`, a pager quit) closes its end of the pipe,
and the next write raises `BrokenPipeError`. Raised while a turn streams its
answer, it cut the turn short: the answer never reached the session's history,
the run was not listed in `neuron-turn sessions`, and a traceback followed.
While a command runs, its standard output and error go through
`DroppedWhenClosed`: once a stream's reader is gone, what is written to it is
dropped (its descriptor then points at the null device, so the interpreter's
last flush succeeds too), and the command ends as its work says.

A standard stream closed before the command started (`neuron-turn chat <&-`,
`>&-`) is `None` in Python, and its descriptor is free: the first file the
command opened (the state file) would take it, and a child process (an MCP
server, the local model's server) writing to its standard output would
write into that file. Such a descriptor gets the null device, and the stream
reads nothing or drops what is written.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO, cast

__all__ = ["DroppedWhenClosed", "output_may_close"]


class DroppedWhenClosed:
    """A text stream that drops what is written once its reader has gone away."""

    def __init__(self, stream: TextIO) -> None:
        """Write through to `stream` until a write or flush finds its reader gone."""
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        """Write `text`, or drop it once the reader is gone."""
        if not self.reader_gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        """Flush, unless the reader is gone."""
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.reader_gone = True
        # What the stream still buffers would fail again at exit: send it nowhere.
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._stream.fileno())
            finally:
                os.close(null)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def output_may_close() -> Iterator[None]:
    """Run the block with `sys.stdout` and `sys.stderr` dropping output once their reader goes.

    A standard stream that was closed is the null device while the block runs.
    """
    stdin = sys.stdin
    if stdin is None:
        sys.stdin = _null(0, "r")
    try:
        out = cast("TextIO", DroppedWhenClosed(sys.stdout or _null(1, "w")))
        err = cast("TextIO", DroppedWhenClosed(sys.stderr or _null(2, "w")))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    finally:
        sys.stdin = stdin


def _null(fd: int, mode: str) -> TextIO:
    """A stream on the null device in place of closed standard descriptor `fd`.

    The descriptor gets the null device too, unless something opened since holds it.
    """
    try:
        os.fstat(fd)
    except OSError:  # free: no file of ours may take it
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        return cast("TextIO", open(fd, mode, encoding="utf-8", closefd=False))
    return cast("TextIO", open(os.devnull, mode, encoding="utf-8"))
