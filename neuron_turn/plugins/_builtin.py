"""The built-in plugin: the context strategies `sliding_window` and `none`.

Registered before any entry point, through the same hookimpl path as
third-party plugins, so it works exactly like one and cannot be displaced.
"""

from __future__ import annotations

from ..loop.sliding_window import NoCompaction, SlidingWindow
from .hookspecs import RegisterContextStrategy, hookimpl

NAME = "builtin"
"""The plugin name the built-in plugin is registered under."""


@hookimpl
def register_context_strategies(register: RegisterContextStrategy) -> None:
    """Offer `sliding_window` (options: `max_messages`, `max_tokens`) and `none`."""
    register("sliding_window", SlidingWindow)
    register("none", NoCompaction)
