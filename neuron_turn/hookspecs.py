"""Plugin hook specifications and markers (pluggy project `neuron_turn`).

Each spec follows the `register_*(register)` idiom: the host passes a
`register` callable and the plugin calls it once per thing it offers.
Plugin authors import only `neuron_turn.hookimpl` and the `Register*`
Protocols below. Specs evolve only by adding arguments; an implementation
receives just the arguments it names (arguments with defaults are not passed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import pluggy

from layer0 import Hook, Orchestrator, StateStore
from neuron_tool import ToolDyn

from .context import ContextStrategy
from .provider import Provider

__all__ = [
    "PROJECT",
    "RegisterContextStrategy",
    "RegisterHook",
    "RegisterOrchestrator",
    "RegisterProvider",
    "RegisterStateStore",
    "RegisterTool",
    "hookimpl",
    "hookspec",
]

PROJECT = "neuron_turn"
"""The pluggy project name, entry-point group and marker name."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marks a plugin's hook implementations: `@neuron_turn.hookimpl`."""


class RegisterProvider(Protocol):
    """The `register` callback of `register_providers`."""

    def __call__(
        self,
        name: str,
        factory: Callable[..., Provider],
        /,
        *,
        aliases: Sequence[str] = (),
    ) -> None:
        """Offer provider `name`; `factory(model, **options)` builds one for a model."""
        ...


class RegisterContextStrategy(Protocol):
    """The `register` callback of `register_context_strategies`."""

    def __call__(self, name: str, factory: Callable[..., ContextStrategy], /) -> None:
        """Offer strategy `name`; `factory(**options)` builds one."""
        ...


class RegisterHook(Protocol):
    """The `register` callback of `register_hooks`."""

    def __call__(self, hook: Hook, /, *, name: str | None = None, observer: bool = False) -> None:
        """Add `hook` to every turn built from plugins; observers always run."""
        ...


class RegisterTool(Protocol):
    """The `register` callback of `register_tools`."""

    def __call__(self, tool: ToolDyn, /) -> None:
        """Offer `tool` under its own name."""
        ...


class RegisterStateStore(Protocol):
    """The `register` callback of `register_state_stores`."""

    def __call__(self, name: str, factory: Callable[..., StateStore], /) -> None:
        """Offer store `name`; `factory(**options)` builds one."""
        ...


class RegisterOrchestrator(Protocol):
    """The `register` callback of `register_orchestrators`."""

    def __call__(self, name: str, factory: Callable[..., Orchestrator], /) -> None:
        """Offer orchestrator `name`; `factory(**options)` builds one."""
        ...


# --- models -----------------------------------------------------------------


@hookspec
def register_providers(register: RegisterProvider) -> None:
    """Offer model providers, addressed by users as `"<name>:<model>"`.

    Called once, when the plugin manager is first used. Call `register` once
    per provider; `factory(model, **options)` must be cheap to import (do
    heavy imports inside it). Two plugins registering one name: looking that
    name up raises an error naming both.

    Example::

        from neuron_turn import hookimpl
        from neuron_turn.testing import FunctionProvider


        @hookimpl
        def register_providers(register):
            register("echo", lambda model, **options: FunctionProvider(echo))
    """


@hookspec
def register_context_strategies(register: RegisterContextStrategy) -> None:
    """Offer context strategies, looked up by name."""


# --- turn extensions --------------------------------------------------------


@hookspec
def register_hooks(register: RegisterHook) -> None:
    """Offer runtime hooks added to every turn built with `NeuronTurn.from_plugins`."""


@hookspec
def register_tools(register: RegisterTool) -> None:
    """Offer tools that turns built from plugins can use."""


# --- running turns ----------------------------------------------------------


@hookspec
def register_state_stores(register: RegisterStateStore) -> None:
    """Offer state stores, looked up by name."""


@hookspec
def register_orchestrators(register: RegisterOrchestrator) -> None:
    """Offer orchestrators, looked up by name."""
