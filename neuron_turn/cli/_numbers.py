"""Number arguments of the command line: a count that may be 0 (`--retries`, `--max-tool-calls`)."""

from __future__ import annotations

import argparse

__all__ = ["whole_number"]


def whole_number(text: str) -> int:
    """Parse a whole number of 0 or more, for argparse.

    Raises:
        argparse.ArgumentTypeError: naming what was given.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value
