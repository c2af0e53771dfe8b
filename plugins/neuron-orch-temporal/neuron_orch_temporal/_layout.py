"""The layout of a payload directory: where each payload's file is, and which files are ours.

Shared by the driver that writes and reads the files (`large_payloads`) and
the pruning that removes old ones (`retention`), which imports no temporalio:
both must agree on every name, or a prune would remove what the driver
still reads, or leave what it no longer does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

__all__ = [
    "DIGEST",
    "INCOMING_PREFIX",
    "PRUNING_PREFIX",
    "SHARD",
    "payload_path",
    "touch",
]

DIGEST: Final = re.compile(r"[0-9a-f]{64}")
"""A payload file's name: the SHA-256 of what it holds, in lowercase hex."""

SHARD: Final = re.compile(r"[0-9a-f]{2}")
"""The folder a payload file is in: its name's first two characters."""

INCOMING_PREFIX: Final = ".incoming-"
"""A payload being written, beside its final name until renamed to it."""

PRUNING_PREFIX: Final = ".pruning-"
"""A payload a prune took from its name, to check and remove it (see `retention`)."""


def payload_path(directory: Path, digest: str) -> Path:
    """The file of the payload whose SHA-256 is `digest` (a 64-character hex string)."""
    return directory / digest[:2] / digest


def touch(path: Path) -> bool:
    """Mark `path` as used now (its modification time); False if it is gone.

    Why: a prune removes payloads by the time they were last used, so a
    payload stored again or read keeps its file.
    """
    try:
        os.utime(path)
    except FileNotFoundError:
        return False
    return True
