"""The `--state PATH` option the commands that use the state file share."""

from __future__ import annotations

import argparse

__all__ = ["add_state_argument"]


def add_state_argument(parser: argparse.ArgumentParser) -> None:
    """Add `--state PATH`, the SQLite state file, to `parser`."""
    parser.add_argument(
        "--state",
        metavar="PATH",
        help="the SQLite state file (default: $NEURON_STATE_PATH, else the user data directory)",
    )
