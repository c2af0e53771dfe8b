"""`neuron-turn fork`: a new session holding the first turns of another, the original kept."""

from __future__ import annotations

import argparse


def add_fork_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `fork` command (not yet offered)."""
