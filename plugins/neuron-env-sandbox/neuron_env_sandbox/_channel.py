"""The parent-child channel: one JSON object per line, each with one key saying what it is.

Parent to child: `{"start": {...}}` once, then `{"reply": {"id", "result" | "error"}}`.
Child to parent: `{"call": {"id", "method", "params"}}` (a provider call or a
state read the parent serves), then one `{"output": TurnOutput}` or
`{"failed": error}`. Lines are capped at `MAX_LINE` bytes: the child runs the
model's code, so the parent treats what it sends as untrusted. The cap is made
from the largest image a provider's answer keeps (`MAX_IMAGE_BASE64`), so an
answer, and the next request carrying it back, fit wherever they would outside.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

from neuron_turn.loop.provider import MAX_IMAGE_BASE64

__all__ = ["MAX_LINE", "ChannelError", "read_message", "write_message"]

_ENVELOPE: Final = 32 * 1024 * 1024
# Room beside one such image for the rest of the message: the answer's text and
# records, or the rest of a history, which the model APIs take at most 32 MiB of.
MAX_LINE: Final = MAX_IMAGE_BASE64 + _ENVELOPE
"""The longest line either side accepts, in bytes: one provider-kept image and what goes with it.

Derived, never set on its own: a smaller cap would fail in the sandbox a call whose
answer passes outside it (its image kept by the provider, then refused by the channel).
"""


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
    except RecursionError:
        # A child can nest arrays deeper than the decoder recurses: refused, not a crash.
        raise ChannelError("a message is nested too deep to read") from None
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
