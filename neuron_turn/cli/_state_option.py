"""The state file for the commands that use it: the `--state PATH` option, and opening it."""

from __future__ import annotations

import argparse
from typing import Any

from ..plugins import PluginManager, get_plugin_manager

__all__ = ["add_state_argument", "open_state_store"]


def add_state_argument(parser: argparse.ArgumentParser) -> None:
    """Add `--state PATH`, the SQLite state file, to `parser`."""
    parser.add_argument(
        "--state",
        metavar="PATH",
        help="the SQLite state file (default: $NEURON_STATE_PATH, else the user data directory)",
    )


def open_state_store(
    path: str | None, *, read_only: bool = False, manager: PluginManager | None = None
) -> Any:
    """Open the SQLite state file at `path` (None: the default), as the state store plugin does.

    `read_only`: neither written nor created, so read access is enough.
    Typed by the caller: a `StateStore`, or a `StateReader` when read-only.
    """
    options: dict[str, Any] = {"read_only": True} if read_only else {}
    if path is not None:
        options["path"] = path
    return (manager or get_plugin_manager()).get_state_store("sqlite", **options)
