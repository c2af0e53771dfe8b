"""Reading what a user names on the command line, never more than a model request can carry.

A file named by `--attach`, `--prompt-file` or `--output-schema`, or standard
input, may be anything: a device that never ends (`/dev/zero`), a pipe (`<(cmd)`)
or a file that grows while it is read, whose size `stat` does not know. Read
whole, such a source fills memory until the kernel kills the process; so each
is read at most `MAX_BYTES` and one past that is refused by name. JSON a user
gives (an option's value, a schema file, an edited input) is read by
`json_value`, which refuses JSON nested deeper than Python's parser can follow
(`[[[[...`) as it refuses JSON that does not parse, rather than raise
`RecursionError`.
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO, Final

__all__ = [
    "MAX_BYTES",
    "TooDeepJSONError",
    "TooLargeError",
    "json_value",
    "read_bounded",
    "readline_bounded",
]

MAX_BYTES: Final = 32 * 1024 * 1024
"""The largest request Anthropic's and OpenAI's APIs take: nothing larger can be sent."""

_CHUNK: Final = 1024 * 1024


class TooLargeError(ValueError):
    """A source held more than `MAX_BYTES`; nothing of it is used."""


class TooDeepJSONError(ValueError):
    """JSON nested deeper than Python's parser follows; nothing of it is used."""


def json_value(text: str | bytes) -> Any:
    """Return the value JSON `text` holds.

    Raises:
        json.JSONDecodeError: it is not JSON.
        TooDeepJSONError: it nests arrays or objects deeper than the parser can follow.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise TooDeepJSONError("JSON nested too deeply to read") from None


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
