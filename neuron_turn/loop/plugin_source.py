"""What `NeuronTurn.from_plugins` needs of a plugin manager, and where the default one comes from.

The loop sits below the plugin system and never imports it. The package
`neuron_turn` installs a factory of the process-wide manager here when it is
imported (the factory loads the plugin system on its first call), so
`NeuronTurn.from_plugins()` without a manager still finds every installed plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    # Annotations only: importing this module must not load the loop.
    from neuron_hooks import HookRegistry
    from neuron_tool import ToolDyn, ToolSource

    from .approval import ApprovalPolicy
    from .context import ContextStrategy
    from .guardrails import InputGuardrail, OutputGuardrail
    from .output import OutputSpec
    from .output_validators import OutputValidator
    from .provider import Provider

__all__ = ["PluginSource", "default_plugin_source", "install_default_plugin_source"]


class PluginSource(Protocol):
    """The lookups `from_plugins` builds a turn from (`neuron_turn.PluginManager` has them)."""

    def get_provider(self, model: str, /, **options: Any) -> Provider:
        """Build the provider for `"<provider>:<model>"`."""
        ...

    def tools_by_name(self, names: Iterable[str]) -> list[ToolDyn | ToolSource]:
        """Return the plugin tools (or tool sources) called `names`, in that order."""
        ...

    def build_hook_registry(self, registry: HookRegistry | None = None) -> HookRegistry:
        """Return a registry holding every plugin hook, in load order."""
        ...

    def get_context_strategy(self, name: str, /, **options: Any) -> ContextStrategy:
        """Build the context strategy `name`."""
        ...

    def approval_policy(self) -> ApprovalPolicy | None:
        """Return the approval policies plugins registered, combined (None: none)."""
        ...

    def registered_guardrails(self) -> list[InputGuardrail | OutputGuardrail]:
        """Return the guardrails plugins registered, in load order."""
        ...

    def registered_output_validators(self) -> list[OutputValidator]:
        """Return the output validators plugins registered, in load order."""
        ...

    def output_type_named(self, name: str) -> OutputSpec[Any]:
        """Return the output type a plugin registered as `name`."""
        ...

    def output_types(self) -> dict[str, OutputSpec[Any]]:
        """Return the output types plugins registered, by name (one two registered left out)."""
        ...


_default: Callable[[], PluginSource] | None = None


def install_default_plugin_source(factory: Callable[[], PluginSource]) -> None:
    """Make `factory` the source `from_plugins` uses when it is given none."""
    global _default
    _default = factory


def default_plugin_source() -> PluginSource:
    """Return the installed default source (the process-wide plugin manager).

    Raises:
        LookupError: no plugin system installed one (only when `neuron_turn.loop`
            is used without `neuron_turn`, which Python's import system prevents).
    """
    if _default is None:
        raise LookupError("no default plugin source: import neuron_turn to install one")
    return _default()
