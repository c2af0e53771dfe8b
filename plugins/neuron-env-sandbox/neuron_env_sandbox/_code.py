"""Where the code a child imports lives, so a sandbox can mount exactly that, read-only."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Final

__all__ = ["CORE_PACKAGES", "code_paths", "import_root", "package_dir"]

CORE_PACKAGES: Final = (
    "layer0",
    "neuron_hooks",
    "neuron_tool",
    "neuron_turn",
    "neuron_env_sandbox",
)
"""The packages every child imports."""


def package_dir(module: str) -> Path | None:
    """Return the directory (or file) holding top-level package of `module`, if found."""
    top = module.partition(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        return None
    origin = Path(str(spec.origin)).resolve()
    return origin.parent if spec.submodule_search_locations is not None else origin


def import_root(module: str) -> Path:
    """Return the directory to put on `sys.path` so `module` imports; `ImportError` if none."""
    found = package_dir(module)
    if found is None:
        raise ImportError(f"plugin module {module!r} is not importable here")
    return found.parent


def code_paths(extra_modules: Iterable[str] = ()) -> list[Path]:
    """Return the interpreter, the environment's packages and every plugin's package.

    A sandbox binds these read-only at the same paths, so the child finds
    exactly the code the parent has, and nothing else of the parent's files.
    """
    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    modules = list(CORE_PACKAGES) + list(extra_modules)
    modules += [ep.module for ep in importlib.metadata.entry_points(group="neuron_turn")]
    for module in modules:
        found = package_dir(module)
        if found is not None and not any(found.is_relative_to(p) for p in paths):
            paths.add(found)
    return sorted(paths)
