"""`neuron-turn forget`: delete a conversation and everything kept of it, for good."""

from __future__ import annotations

import argparse


def add_forget_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `forget` command (not yet offered)."""
