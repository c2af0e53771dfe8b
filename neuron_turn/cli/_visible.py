r"""Text a model wrote, made safe to show on a terminal: its control characters written out.

A terminal acts on the control characters it is sent: an escape sequence in
an answer, a tool result or a call id can clear the screen, move the cursor
to rewrite the line above (an approval question showing a harmless call in
place of the one that waits), set the window title or, on many terminals,
write the clipboard. What a model or a tool's output says is untrusted, so on
a terminal each control character (C0 but newline and tab, DEL, C1) is shown
as its escape, `\x1b` for ESC; a line ending `\r\n` is a newline. Written
to a pipe or a file, the text goes out as it is: a program reads it whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TextIO

from ._waiting import on_terminal

__all__ = ["shown_on", "visible"]

_CONTROLS: Final = (*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0))
_WRITTEN_OUT: Final = str.maketrans({code: f"\\x{code:02x}" for code in _CONTROLS})


def visible(text: str) -> str:
    r"""Return `text` with each control character but newline and tab written as `\xNN`."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(_WRITTEN_OUT)


def _as_is(text: str) -> str:
    return text


def shown_on(stream: TextIO) -> Callable[[str], str]:
    """Return what text written to `stream` goes through: `visible` on a terminal, else nothing."""
    return visible if on_terminal(stream) else _as_is
