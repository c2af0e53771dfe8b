"""Which GGUF file a model string means: `local:default`, `local:<path>` or `NEURON_LOCAL_MODEL`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from .errors import ModelFileError

__all__ = ["DEFAULT", "MODEL_ENV", "check_model_file", "requested_file"]

DEFAULT: Final = "default"
"""The model string of the default model (`local:default`); an empty string means it too."""
MODEL_ENV: Final = "NEURON_LOCAL_MODEL"
"""The environment variable naming a GGUF file that `local:default` runs instead."""


def requested_file(model: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """Return the GGUF file `model` names, or None for the built-in default model.

    A path (`local:/models/phi.gguf`, `local:~/m.gguf`) always wins; `default`
    (or nothing) means the file `NEURON_LOCAL_MODEL` names, when it is set.
    """
    env = os.environ if environ is None else environ
    if model.strip() in ("", DEFAULT):
        chosen = env.get(MODEL_ENV, "").strip()
        return Path(chosen).expanduser() if chosen else None
    return Path(model).expanduser()


def check_model_file(path: Path) -> Path:
    """Return `path` made absolute when it is a readable file.

    Raises:
        ModelFileError: it is missing, not a file, or unreadable.
    """
    if not path.exists():
        raise ModelFileError(str(path), "no such file (give a path to a .gguf file)")
    if not path.is_file():
        raise ModelFileError(str(path), "not a file")
    if not os.access(path, os.R_OK):
        raise ModelFileError(str(path), "not readable")
    return path.resolve()
