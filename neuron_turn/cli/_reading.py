"""Reading what a user names on the command line, never more than a model request can carry.

A file named by `--attach`, `--prompt-file` or `--output-schema`, or standard
input, may be anything: a device that never ends (`/dev/zero`), a pipe (`<(cmd)`)
or a file that grows while it is read, whose size `stat` does not know. Read
whole, such a source fills memory until the kernel kills the process; so each
is read at most `MAX_BYTES` and one past that is refused by name.
"""

from __future__ import annotations

from typing import BinaryIO, Final

__all__ = ["MAX_BYTES", "TooLargeError", "read_bounded", "readline_bounded"]

MAX_BYTES: Final = 32 * 1024 * 1024
"""The largest request Anthropic's and OpenAI's APIs take: nothing larger can be sent."""

_CHUNK: Final = 1024 * 1024


class TooLargeError(ValueError):
    """A source held more than `MAX_BYTES`; nothing of it is used."""


def read_bounded(file: BinaryIO, limit: int = MAX_BYTES) -> bytes:
    """Return what `file` holds, read to its end.

    Raises:
        TooLargeError: it holds more than `limit` bytes (at most `limit + 1` are read).
    """
    data = file.read(limit + 1)
    if len(data) > limit:
        raise TooLargeError(f"more than {limit:,} bytes")
    return data


def readline_bounded(file: BinaryIO, limit: int = MAX_BYTES) -> bytes:
    """Return `file`'s next line (b"" at its end).

    Raises:
        TooLargeError: the line is longer than `limit` bytes; the rest of it is read and
            dropped, a chunk at a time, so the next read starts at the next line.
    """
    line = file.readline(limit + 1)
    if len(line) <= limit:
        return line
    while not line.endswith(b"\n"):
        line = file.readline(_CHUNK)
        if not line:
            break
    raise TooLargeError(f"more than {limit:,} bytes")
