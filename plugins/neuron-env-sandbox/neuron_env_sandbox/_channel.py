"""The parent-child channel: one JSON object per line, each with one key saying what it is.

Parent to child: `{"start": {...}}` once, then `{"reply": {"id", "result" | "error"}}`.
Child to parent: `{"call": {"id", "method", "params"}}` (a provider call or a
state read the parent serves), then one `{"output": TurnOutput}` or
`{"failed": error}`. Lines are capped at `MAX_LINE` bytes: the child runs the
model's code, so the parent treats what it sends as untrusted.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

__all__ = ["MAX_LINE", "ChannelError", "read_message", "write_message"]

MAX_LINE: Final = 32 * 1024 * 1024
"""The longest line either side accepts, in bytes."""


class ChannelError(ValueError):
    """A line on the channel is not one JSON object with a single known key."""


async def read_message(reader: asyncio.StreamReader) -> tuple[str, Any] | None:
    """Return the next message as `(kind, body)`, or None at the end of the stream.

    Raises:
        ChannelError: the line is too long or is not a one-key JSON object.
    """
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        line = exc.partial
    except asyncio.LimitOverrunError as exc:
        raise ChannelError(f"a message is longer than {MAX_LINE} bytes") from exc
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise ChannelError(f"a message is not JSON: {exc}") from exc
    if not isinstance(message, dict) or len(message) != 1:
        raise ChannelError("a message is not a JSON object with exactly one key")
    ((kind, body),) = message.items()
    return kind, body


async def write_message(writer: asyncio.StreamWriter, kind: str, body: object) -> None:
    """Send one message and wait until it is handed to the OS.

    Raises:
        ChannelError: the message is longer than `MAX_LINE` (nothing was sent), which
            the other side could not read.
    """
    line = json.dumps({kind: body}, separators=(",", ":")).encode() + b"\n"
    if len(line) > MAX_LINE:
        raise ChannelError(
            f"a {kind} message of {len(line)} bytes is longer than the {MAX_LINE} bytes "
            "the sandbox channel carries"
        )
    writer.write(line)
    await writer.drain()
