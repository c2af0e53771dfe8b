"""Warnings `neuron_turn` emits, under one base so users can filter them all.

```
NeuronWarning(UserWarning)
└── PluginLoadWarning       a plugin failed to load; the others still did
```
"""

from __future__ import annotations

__all__ = ["NeuronWarning", "PluginLoadWarning"]


class NeuronWarning(UserWarning):
    """Base of every warning `neuron_turn` emits."""


class PluginLoadWarning(NeuronWarning):
    """A plugin failed to load (import, validation or its registration hook); it was skipped.

    The message names the plugin, its distribution and version, the entry
    point and the error. Set `NEURON_STRICT_PLUGINS=1` to raise instead.
    """
