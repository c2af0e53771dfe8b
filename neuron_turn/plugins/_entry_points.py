"""Loading plugins from entry points, one at a time, each inside its own `try`.

Settings come from the environment: `NEURON_LOAD_PLUGINS` (allow-list),
`NEURON_DISABLE_PLUGINS` (deny-list), `NEURON_STRICT_PLUGINS=1` (raise
instead of warning). Entry points are found with
`importlib.metadata.entry_points`, which names each one's distribution
without importing it and lists a distribution found twice on `sys.path` once.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from ._records import PluginFailure, PluginOrigin
from .errors import DuplicatePluginError, PluginHookError
from .hookspecs import PROJECT

__all__ = ["PluginSettings", "load_entry_points", "normalize_name"]

ENV_LOAD: Final = "NEURON_LOAD_PLUGINS"
ENV_DISABLE: Final = "NEURON_DISABLE_PLUGINS"
ENV_STRICT: Final = "NEURON_STRICT_PLUGINS"
_TRUE: Final = frozenset({"1", "true", "yes", "on"})


class _LoadTarget(Protocol):
    """What the loader needs of the plugin manager it loads into."""

    def register(
        self, plugin: object, *, name: str | None = None, origin: PluginOrigin | None = None
    ) -> str: ...
    def fail(self, failure: PluginFailure, *, strict: bool = False) -> None: ...
    def disable(self, origin: PluginOrigin) -> None: ...
    def has_plugin(self, name: str) -> bool: ...
    def origin(self, name: str) -> PluginOrigin: ...


class EntryPointLike(Protocol):
    """What the loader uses of an `importlib.metadata.EntryPoint` (tests pass look-alikes)."""

    @property
    def name(self) -> str:
        """The entry-point name, which becomes the plugin's name."""
        ...

    @property
    def value(self) -> str:
        """`module` or `module:attr`."""
        ...

    def load(self) -> object:
        """Import and return the plugin object."""
        ...


@dataclass(frozen=True, slots=True)
class PluginSettings:
    """Which entry points to load and how to report failures; see `from_env`.

    They apply to entry points only: the built-in plugin always loads.
    """

    load: frozenset[str] | None = None
    """Entry-point or distribution names to load; None loads every plugin."""
    disable: frozenset[str] = frozenset()
    """Entry-point or distribution names never to load."""
    strict: bool = False
    """Raise `PluginLoadError` on the first failure instead of warning."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> PluginSettings:
        """Read the `NEURON_*_PLUGINS` variables (comma-separated names); `""` loads none."""
        env = os.environ if environ is None else environ
        allow = env.get(ENV_LOAD)
        return cls(
            load=None if allow is None else _names(allow),
            disable=_names(env.get(ENV_DISABLE, "")),
            strict=env.get(ENV_STRICT, "").strip().lower() in _TRUE,
        )

    def allows(self, origin: PluginOrigin) -> bool:
        """Whether the plugin may load: allow-listed (if there is a list) and not denied."""
        names = {normalize_name(origin.name)}
        if origin.distribution is not None:
            names.add(normalize_name(origin.distribution))
        if names & self.disable:
            return False
        return self.load is None or bool(names & self.load)


def load_entry_points(
    manager: _LoadTarget,
    settings: PluginSettings,
    entry_points: Iterable[EntryPointLike] | None = None,
) -> None:
    """Load every allowed entry point of the group `neuron_turn` into `manager`.

    Entry points load in the order of their names (stable, so the first of
    two with the same name is the one `sys.path` lists first).
    """
    found = importlib.metadata.entry_points(group=PROJECT) if entry_points is None else entry_points
    for entry_point in sorted(found, key=lambda ep: ep.name):
        origin = _origin(entry_point)
        if not settings.allows(origin):
            manager.disable(origin)
        elif manager.has_plugin(origin.name):
            taken = DuplicatePluginError(origin.name, taken_by=manager.origin(origin.name).label())
            manager.fail(PluginFailure(origin, "duplicate", taken), strict=settings.strict)
        else:
            _load_one(manager, entry_point, origin, strict=settings.strict)


def _load_one(
    manager: _LoadTarget, entry_point: EntryPointLike, origin: PluginOrigin, *, strict: bool
) -> None:
    try:
        plugin = entry_point.load()
    except Exception as exc:
        manager.fail(PluginFailure(origin, "import", exc), strict=strict)
        return
    try:
        manager.register(plugin, origin=origin)
    except PluginHookError as exc:
        manager.fail(PluginFailure(origin, exc.hook, exc.error), strict=strict)
    except Exception as exc:
        manager.fail(PluginFailure(origin, "validation", exc), strict=strict)


def _origin(entry_point: EntryPointLike) -> PluginOrigin:
    dist = getattr(entry_point, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    version = getattr(dist, "version", None) if dist is not None else None
    return PluginOrigin(
        name=entry_point.name,
        distribution=name if isinstance(name, str) else None,
        version=version if isinstance(version, str) else None,
        entry_point=entry_point.value,
    )


def _names(text: str) -> frozenset[str]:
    return frozenset(normalize_name(name) for name in text.split(",") if name.strip())


def normalize_name(name: str) -> str:
    # PEP 503 normalisation, so neuron_provider_x, Neuron-Provider-X and
    # neuron.provider.x all name the same distribution.
    return re.sub(r"[-_.]+", "-", name.strip()).lower()
