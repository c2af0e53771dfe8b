"""Which GGUF file a model string means: `local:default`, `local:<path>` or `NEURON_LOCAL_MODEL`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from .errors import ModelFileError

__all__ = ["DEFAULT", "GGUF_MAGIC", "MODEL_ENV", "check_model_file", "requested_file"]

DEFAULT: Final = "default"
"""The model string of the default model (`local:default`); an empty string means it too."""
GGUF_MAGIC: Final = b"GGUF"
"""The first four bytes of every GGUF file."""
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
    """Return `path` made absolute when it is a readable GGUF file.

    Checked here, before llama.cpp's server is started, because the server
    only says "Failed to init server, please check the input params".

    Raises:
        ModelFileError: it is missing, not a file, unreadable or not GGUF.
    """
    if not path.exists():
        raise ModelFileError(str(path), "no such file (give a path to a .gguf file)")
    if not path.is_file():
        raise ModelFileError(str(path), "not a file")
    try:
        with path.open("rb") as file:
            magic = file.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise ModelFileError(str(path), f"not readable ({exc.strerror or exc})") from exc
    if magic != GGUF_MAGIC:
        raise ModelFileError(
            str(path),
            f"not a GGUF model file (it starts with {magic!r}, not {GGUF_MAGIC!r}); "
            "give a .gguf file, e.g. one converted with llama.cpp's convert_hf_to_gguf.py",
        )
    return path.resolve()
