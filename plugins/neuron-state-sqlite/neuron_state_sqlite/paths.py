"""Where the state database lives when the caller does not say."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = ["ENV_VAR", "default_path"]

ENV_VAR: Final = "NEURON_STATE_PATH"
"""Environment variable holding the database path; overrides the platform default."""

_APP: Final = "neuron-turn"
_FILE: Final = "state.db"


def default_path() -> Path:
    """Return `$NEURON_STATE_PATH`, else `state.db` in the user's data directory.

    The data directory is `$XDG_DATA_HOME/neuron-turn` (falling back to
    `~/.local/share/neuron-turn`), `~/Library/Application Support/neuron-turn`
    on macOS and `neuron-turn` under `%LOCALAPPDATA%` on Windows.
    """
    return _default_path(os.environ, platform=sys.platform, home=Path.home())


def _default_path(environ: Mapping[str, str], *, platform: str, home: Path) -> Path:
    """Resolve the default path from explicit inputs, so tests need not patch globals."""
    override = environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    return _data_dir(environ, platform=platform, home=home) / _APP / _FILE


def _data_dir(environ: Mapping[str, str], *, platform: str, home: Path) -> Path:
    """Return the per-user data directory of `platform`."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        local = environ.get("LOCALAPPDATA")
        return Path(local) if local else home / "AppData" / "Local"
    xdg = environ.get("XDG_DATA_HOME")
    # The XDG spec says relative paths are invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg)
    return home / ".local" / "share"
