"""`Terminal`: a program run on a pseudo-terminal, for behaviour that depends on one.

The program is a session leader with the terminal as its controlling terminal,
so `isatty()` is true on its stdin, stdout and stderr, and Ctrl-C typed on the
terminal (`send(CTRL_C)`) reaches it as SIGINT through the line discipline,
as it does for a user. `expect` waits on the terminal's output with `select`
(no sleeps) until a pattern shows or a deadline passes. `output` is what a
user would read: a line rewritten in place (carriage return, erase line) shows
only as its last state, and other escape sequences are dropped.
"""

from __future__ import annotations

import codecs
import fcntl
import os
import re
import select
import subprocess
import termios
import time
from collections.abc import Mapping, Sequence
from typing import Final

CTRL_C: Final = b"\x03"
CTRL_D: Final = b"\x04"
_ERASED: Final = re.compile(r"[^\n]*\r\x1b\[K")
_ANSI: Final = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


class Terminal:
    """A child process whose stdin, stdout and stderr are one pseudo-terminal."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = 60.0,
        stdout: int | None = None,
    ) -> None:
        """Start `argv` on a new terminal; `stdout` (a file descriptor) sends stdout elsewhere."""
        self.timeout = timeout
        self.master, slave = os.openpty()
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave if stdout is None else stdout,
            stderr=slave,
            env=None if env is None else dict(env),
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_take_terminal,  # the child must own the terminal
        )
        os.close(slave)
        self.raw = ""
        """Everything the program wrote so far, as it wrote it."""
        self._seen = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    @property
    def output(self) -> str:
        """What the terminal shows: lines as last drawn, escape sequences removed."""
        text = self.raw.replace("\r\n", "\n")
        return _ANSI.sub("", _ERASED.sub("", text))

    def send(self, data: bytes) -> None:
        """Type `data` on the terminal."""
        os.write(self.master, data)

    def expect(self, pattern: str) -> re.Match[str]:
        """Wait until `pattern` (a regex) shows after what earlier `expect`s consumed."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + self.timeout
        while True:
            output = self.output
            match = regex.search(output, self._seen)
            if match:
                # A match on the last, unfinished line may be redrawn in place: the
                # next search starts at that line, which stays where it is.
                finished = "\n" in output[match.end() :]
                self._seen = match.end() if finished else output.rfind("\n", 0, match.end()) + 1
                return match
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"{pattern!r} not shown; the terminal shows:\n{self.output}")

    def wait(self) -> int:
        """Read the output to its end and return the exit code."""
        deadline = time.monotonic() + self.timeout
        while self._read(max(0.0, deadline - time.monotonic())):
            pass
        return self.process.wait(timeout=max(0.1, deadline - time.monotonic()))

    def close(self) -> None:
        """Kill the program if it still runs and release the terminal."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the program closed the terminal
            return False
        if not data:
            return False
        self.raw += self._decoder.decode(data)
        return True


def _take_terminal() -> None:
    # Runs in the child after setsid(): stdin is the terminal; make it the controlling one.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
