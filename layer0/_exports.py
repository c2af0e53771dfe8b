"""Public names that resolve on first use (PEP 562), for this distribution's package `__init__`s.

Why: `import layer0` (or `neuron_turn`) then costs a few milliseconds, and a
name's module loads when the name is first read. Shared by `layer0`,
`neuron_hooks`, `neuron_tool` and `neuron_turn`, which ship together.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import cast

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    namespace: MutableMapping[str, object],
    exports: Mapping[str, Sequence[str]],
    *,
    renamed: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Return the package's module `__getattr__` and `__dir__` for `exports`.

    `exports` maps each relative module (`.effect`) to the public names it
    defines; `renamed` maps a public name to the one its module defines it
    under. A name read once is kept in `namespace` (the package's globals),
    so the next read is a plain attribute read; `__dir__` lists the
    package's `__all__` with what it has loaded.
    """
    module_of = {name: module for module, names in exports.items() for name in names}
    original = dict(renamed or {})

    def __getattr__(name: str) -> object:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), original.get(name, name))
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        exported = cast("list[str]", namespace.get("__all__", []))
        return sorted(set(namespace) | set(exported))

    return __getattr__, __dir__
