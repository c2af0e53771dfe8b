"""Number arguments of the command line: counts (`--retries`, `--limit`) and a port."""

from __future__ import annotations

import argparse

__all__ = ["port_number", "positive_whole_number", "whole_number"]

_MOST_PORT = 65535


def whole_number(text: str) -> int:
    """Parse a whole number of 0 or more, for argparse.

    Raises:
        argparse.ArgumentTypeError: naming what was given.
    """
    return _at_least(text, 0)


def positive_whole_number(text: str) -> int:
    """Parse a whole number of 1 or more (`show --limit`), for argparse.

    Raises:
        argparse.ArgumentTypeError: naming what was given.
    """
    return _at_least(text, 1)


def _at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more, not {value}")
    return value


def port_number(text: str) -> int:
    """Parse a TCP port, 0 (any free one) to 65535, for argparse.

    Raises:
        argparse.ArgumentTypeError: naming what was given.
    """
    value = whole_number(text)
    if value > _MOST_PORT:
        raise argparse.ArgumentTypeError(f"a port is 0 to {_MOST_PORT}, not {value}")
    return value
