"""How much of a turn's text a page shows: each text cut at a length, the page's total bounded.

A tool can return megabytes (a file read whole) and a turn can make
thousands of calls: shown whole, one such turn made a page no browser draws
in reasonable time (a 50 MB tool result gave 131 MB of HTML). So a page
shows at most `MAX_TEXT_CHARS` of one text and `MAX_PAGE_CHARS` in all
(`TextAllowance`); past either, a note says how much there is and that
`neuron-turn show ID --json` prints the turn whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Final

from ..loop._recorder import MAX_OUTPUT_CHARS

__all__ = ["MAX_PAGE_CHARS", "MAX_TEXT_CHARS", "TextAllowance", "shown_text"]

MAX_TEXT_CHARS: Final = MAX_OUTPUT_CHARS
"""The most characters of one text a page shows: as many as the timeline keeps of a tool output."""
MAX_PAGE_CHARS: Final = 1_000_000
"""The most characters of a turn's text one page shows in all (escaped, at most a few MB)."""


@dataclass
class TextAllowance:
    """What one page may still show of a turn's text: a page makes one and spends it."""

    turn_id: str
    """The turn shown, named in the notes on what was cut."""
    per_text: int = MAX_TEXT_CHARS
    """The most characters of one text."""
    left: int = MAX_PAGE_CHARS
    """The characters the page may still show."""


def shown_text(text: str, allowance: TextAllowance) -> str:
    """`text` escaped for HTML (text or attribute), cut as `allowance` allows, with a note if cut.

    What is shown is spent from `allowance`.
    """
    shown = min(len(text), allowance.per_text, allowance.left)
    allowance.left -= shown
    if shown == len(text):
        return escape(text)
    whole = f"`neuron-turn show {allowance.turn_id} --json` prints it whole"
    if shown == 0:
        note = f"[{len(text):,} characters not shown: the page already shows as many as it may; "
        return escape(f"{note}{whole}]")
    note = f"… [{len(text):,} characters in all, the first {shown:,} shown; {whole}]"
    return escape(text[:shown]) + escape(note)
