r"""Text a model wrote, made safe to show on a terminal: its control characters written out.

A terminal acts on the control characters it is sent: an escape sequence in
an answer, a tool result or a call id can clear the screen, move the cursor
to rewrite the line above (an approval question showing a harmless call in
place of the one that waits), set the window title or, on many terminals,
write the clipboard. What a model or a tool's output says is untrusted, so on
a terminal each control character (C0 but newline and tab, DEL, C1) is shown
as its escape, `\x1b` for ESC; a line ending `\r\n` is a newline. JSON (`--json`)
on a terminal has its DEL and C1 controls written as JSON escapes (its writer
escaped the rest), so it stays the same JSON. Written to a pipe or a file, the
text goes out as it is: a program reads it whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TextIO

from ._waiting import on_terminal

__all__ = ["json_escaped", "json_shown_on", "one_line", "shown_on", "visible"]

_CONTROLS: Final = (*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0))
_WRITTEN_OUT: Final = str.maketrans({code: f"\\x{code:02x}" for code in _CONTROLS})
_ONE_LINE: Final = str.maketrans({code: f"\\x{code:02x}" for code in (*_CONTROLS, 0x09, 0x0A)})
_JSON_ESCAPED: Final = str.maketrans({code: f"\\u{code:04x}" for code in _CONTROLS if code >= 0x7F})
"""DEL and the C1 controls as JSON escapes. JSON writers escape C0 but leave these as
they are, and a terminal acts on C1's 8-bit CSI and OSC as on ESC [ and ESC ]."""


def visible(text: str) -> str:
    r"""Return `text` with each control character but newline and tab written as `\xNN`."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(_WRITTEN_OUT)


def one_line(text: str) -> str:
    r"""Return `text` with every control character, newline and tab too, written as `\xNN`.

    Why: a field of a listing of one line per item (a session id, which any
    served agent's client may choose) must not start lines of its own, piped
    or not: a script or a person would read a forged entry.
    """
    return text.translate(_ONE_LINE)


def json_escaped(text: str) -> str:
    r"""Return JSON `text` with DEL and each C1 control as its `\u00NN` escape: the same JSON.

    Outside strings JSON holds ASCII only, so each is in a string, where the
    escape means the same character.
    """
    return text.translate(_JSON_ESCAPED)


def _as_is(text: str) -> str:
    return text


def shown_on(stream: TextIO) -> Callable[[str], str]:
    """Return what text written to `stream` goes through: `visible` on a terminal, else nothing."""
    return visible if on_terminal(stream) else _as_is


def json_shown_on(stream: TextIO) -> Callable[[str], str]:
    """Return what JSON written to `stream` goes through: `json_escaped` on a terminal, or nothing.

    Piped, a program reads the JSON as it was made; on a terminal it is the same JSON.
    """
    return json_escaped if on_terminal(stream) else _as_is
