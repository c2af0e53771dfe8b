"""`neuron-turn plugins`: the listing of loaded, failed, conflicting and disabled plugins."""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

from ..plugins import PluginInfo, PluginManager

_TITLES: Final = {
    "providers": "providers",
    "context_strategies": "context strategies",
    "state_stores": "state stores",
    "orchestrators": "orchestrators",
    "hooks": "hooks",
    "tools": "tools",
    "approval_policies": "approval policies",
    "output_validators": "output validators",
    "output_types": "output types",
}


def listing_text(manager: PluginManager) -> str:
    """Return the listing for people: each plugin, then failures, conflicts, disabled ones."""
    lines: list[str] = []
    for info in manager.plugins():
        lines.extend(_plugin_lines(info))
    failures = manager.failures
    if failures:
        lines.append(f"\n{len(failures)} plugin(s) failed to load:")
        lines.extend(f"  {failure.describe()}" for failure in failures)
    conflicts = manager.conflicts()
    if conflicts:
        lines.append("\nConflicts (looking these names up fails):")
        lines.extend(f"  {conflict}" for conflict in conflicts)
    if manager.disabled:
        names = ", ".join(origin.label() for origin in manager.disabled)
        lines.append(f"\nNot loaded (NEURON_LOAD_PLUGINS / NEURON_DISABLE_PLUGINS): {names}")
    return "\n".join(lines)


def _plugin_lines(info: PluginInfo) -> list[str]:
    origin = info.origin
    version = f" {origin.version}" if origin.version else ""
    source = f" ({origin.distribution}{version})" if origin.distribution else ""
    lines = [f"{origin.name}{source}"]
    if origin.entry_point is not None:
        lines.append(f"  entry point: {origin.name} = {origin.entry_point}")
    lines.append(f"  implements: {', '.join(info.hooks)}")
    for kind, names in info.registered.items():
        if names:
            lines.append(f"  {_TITLES.get(kind, kind)}: {', '.join(names)}")
    return lines


def listing_json(manager: PluginManager) -> dict[str, JsonValue]:
    """Return the listing for machines: `plugins`, `failures`, `conflicts`, `disabled`."""
    return {
        "plugins": [info.to_json() for info in manager.plugins()],
        "failures": [failure.to_json() for failure in manager.failures],
        "conflicts": [
            {"kind": c.kind, "name": c.name, "plugins": list(c.plugins)}
            for c in manager.conflicts()
        ],
        "disabled": [origin.name for origin in manager.disabled],
    }
