"""`PluginManager`: registered plugins, the ones that failed, and lookups by name.

Each plugin's `register_*` hooks are called once, when it is registered, so
a failure is reported against the plugin that caused it and the listing can
say what every plugin registered without building anything. Factories are
called only by the lookups (`get_provider`, `get_context_strategy`, …).
"""

from __future__ import annotations

import difflib
import importlib.metadata
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

import pluggy

from layer0 import EnvError, Environment, Orchestrator, StateStore
from neuron_hooks import HookRegistry
from neuron_tool.source import ToolSource
from neuron_tool.tool import ToolDyn

from ..loop.approval import ApprovalPolicy
from ..loop.context import ContextStrategy
from ..loop.guardrails import InputGuardrail, OutputGuardrail
from ..loop.output import OutputSpec
from ..loop.output_validators import OutputValidator
from ..loop.provider import Provider
from ..loop.provider_errors import ProviderError
from . import _builtin as _builtin_plugin
from . import hookspecs
from ._calls import collect
from ._entry_points import EntryPointLike, PluginSettings, load_entry_points, normalize_name
from ._records import (
    Contributions,
    FactoryKind,
    PluginFailure,
    PluginHook,
    PluginInfo,
    PluginOrigin,
    PluginTool,
    Registered,
)
from .errors import (
    DuplicatePluginError,
    InvalidModelError,
    NameConflictError,
    PluginError,
    PluginFactoryError,
    PluginLoadError,
    ProviderConflictError,
    UnknownContextStrategyError,
    UnknownEnvironmentError,
    UnknownNameError,
    UnknownOrchestratorError,
    UnknownOutputTypeError,
    UnknownProviderError,
    UnknownStateStoreError,
    UnknownToolError,
    UnknownWorkerError,
)
from .warnings import PluginLoadWarning
from .worker import Worker

__all__ = ["PluginManager"]

_LABELS: Final[dict[FactoryKind, str]] = {
    "provider": "provider",
    "context_strategy": "context strategy",
    "state_store": "state store",
    "orchestrator": "orchestrator",
    "worker": "worker",
    "environment": "environment",
}
_UNKNOWN: Final[dict[FactoryKind, type[UnknownNameError]]] = {
    "provider": UnknownProviderError,
    "context_strategy": UnknownContextStrategyError,
    "state_store": UnknownStateStoreError,
    "orchestrator": UnknownOrchestratorError,
    "worker": UnknownWorkerError,
    "environment": UnknownEnvironmentError,
}


@dataclass(frozen=True, slots=True)
class _Loaded:
    origin: PluginOrigin
    hooks: tuple[str, ...]
    contributions: Contributions


class PluginManager:
    """Registered plugins, the ones that failed, and lookups of what they registered.

    `PluginManager()` holds only the built-in plugin; `get_plugin_manager()`
    returns the shared one that also loaded the installed entry points.
    Tests build their own and `register` ad-hoc plugin objects on it.
    """

    def __init__(self, *, builtins: bool = True) -> None:
        """Create a manager holding the built-in plugin (unless `builtins=False`)."""
        self.pluggy: Final = pluggy.PluginManager(hookspecs.PROJECT)
        self.pluggy.add_hookspecs(hookspecs)
        self._loaded: dict[str, _Loaded] = {}
        self._failures: list[PluginFailure] = []
        self._disabled: list[PluginOrigin] = []
        if builtins:
            self.register(_builtin_plugin, origin=_builtin_origin())

    # --- registering --------------------------------------------------------

    def register(
        self, plugin: object, *, name: str | None = None, origin: PluginOrigin | None = None
    ) -> str:
        """Register `plugin` (a module or object with `@hookimpl`s) and call its hooks.

        The name comes from `origin`, else `name`, else pluggy's canonical name.
        Nothing stays registered if this raises.

        Raises:
            DuplicatePluginError: the name is taken.
            PluginError: the name is disabled, or `plugin` is registered already.
            pluggy.PluginValidationError: a hook is unknown or has arguments
                its spec lacks, or the plugin implements no hook at all.
            PluginHookError: one of its `register_*` hooks raised.
        """
        if origin is None:
            origin = PluginOrigin(name or self.pluggy.get_canonical_name(plugin))
        if origin.name in self._loaded:
            raise DuplicatePluginError(
                origin.name, taken_by=self._loaded[origin.name].origin.label()
            )
        taken_as = self.pluggy.get_name(plugin)
        if taken_as is not None:
            raise PluginError(
                f"plugin {origin.name!r} is the same object as the plugin {taken_as!r}, "
                "already registered; two entry points must not name one module"
            )
        if self.pluggy.register(plugin, name=origin.name) is None:
            raise PluginError(f"plugin {origin.name!r} is disabled (NEURON_DISABLE_PLUGINS)")
        try:
            hooks = _check_hooks(self.pluggy, plugin)
            contributions = collect(self.pluggy, origin.name)
        except BaseException:
            self.pluggy.unregister(name=origin.name)
            raise
        self._loaded[origin.name] = _Loaded(origin, hooks, contributions)
        return origin.name

    def unregister(self, name: str) -> None:
        """Remove the plugin called `name` and everything it registered; no-op if absent."""
        if self._loaded.pop(name, None) is not None:
            self.pluggy.unregister(name=name)

    def load_entry_points(
        self,
        settings: PluginSettings | None = None,
        *,
        entry_points: Iterable[EntryPointLike] | None = None,
    ) -> None:
        """Load the installed plugins (or `entry_points`), as `settings` (default: env) say."""
        settings = PluginSettings.from_env() if settings is None else settings
        load_entry_points(self, settings, entry_points)

    def fail(self, failure: PluginFailure, *, strict: bool = False) -> None:
        """Record `failure` and warn with `PluginLoadWarning`; with `strict`, raise instead.

        Raises:
            PluginLoadError: `strict` is set.
        """
        self._failures.append(failure)
        if strict:
            raise PluginLoadError(failure) from failure.error
        warnings.warn(failure.describe(), PluginLoadWarning, stacklevel=2)

    def disable(self, origin: PluginOrigin) -> None:
        """Record that the plugin `origin` names was not loaded because settings exclude it."""
        if origin.name not in self._loaded:
            self.pluggy.set_blocked(origin.name)
        self._disabled.append(origin)

    # --- what is loaded ------------------------------------------------------

    def has_plugin(self, name: str) -> bool:
        """Whether a plugin called `name` is registered."""
        return name in self._loaded

    def origin(self, name: str) -> PluginOrigin:
        """Return where the registered plugin `name` came from; `KeyError` if absent."""
        return self._loaded[name].origin

    @property
    def failures(self) -> tuple[PluginFailure, ...]:
        """The plugins that failed to load, in the order they were tried."""
        return tuple(self._failures)

    @property
    def disabled(self) -> tuple[PluginOrigin, ...]:
        """The plugins not loaded because of `NEURON_LOAD_PLUGINS`/`NEURON_DISABLE_PLUGINS`."""
        return tuple(self._disabled)

    def plugins(self) -> list[PluginInfo]:
        """Return each loaded plugin in load order, with its hooks and what it registered."""
        return [
            PluginInfo(
                origin=loaded.origin,
                hooks=loaded.hooks,
                registered={k: tuple(v) for k, v in loaded.contributions.names().items()},
            )
            for loaded in self._loaded.values()
        ]

    def conflicts(self) -> list[NameConflictError]:
        """Return one error per name two or more plugins registered (factories, tools, outputs)."""
        owners: dict[tuple[str, str], list[str]] = {}
        for loaded in self._loaded.values():
            for item in loaded.contributions.factories:
                for name in (item.name, *item.aliases):
                    owners.setdefault((_LABELS[item.kind], name), []).append(item.plugin)
            for tool in loaded.contributions.tools:
                owners.setdefault(("tool", tool.name), []).append(tool.plugin)
            for output in loaded.contributions.output_types:
                owners.setdefault(("output type", output.name), []).append(output.plugin)
        return [
            self._conflict(kind, name, plugins)
            for (kind, name), plugins in owners.items()
            if len(plugins) > 1
        ]

    # --- lookups --------------------------------------------------------------

    def get_provider(self, model: str, /, **options: Any) -> Provider:
        """Build the provider for `"<provider>:<model>"`: `factory(model, **options)`.

        Raises:
            InvalidModelError: `model` has no `<provider>:` prefix.
            UnknownProviderError: no plugin registered that provider.
            ProviderConflictError: two plugins registered it.
            PluginFactoryError: the factory raised (other than a `ProviderError`)
                or did not return a `Provider`.
            ProviderError: the factory refused, e.g. for a missing API key.
        """
        provider, _, model_name = model.partition(":")
        if not provider or not model_name:
            raise InvalidModelError(model, providers=self._names("provider"))
        item = self._resolve("provider", provider)
        return cast(Provider, self._build(item, Provider, model_name, options))

    def get_context_strategy(self, name: str, /, **options: Any) -> ContextStrategy:
        """Build the context strategy `name` with `factory(**options)`; errors as `get_provider`."""
        item = self._resolve("context_strategy", name)
        return cast(ContextStrategy, self._build(item, ContextStrategy, None, options))

    def get_state_store(self, name: str, /, **options: Any) -> StateStore:
        """Build the state store `name` with `factory(**options)`; errors as `get_provider`."""
        item = self._resolve("state_store", name)
        return cast(StateStore, self._build(item, StateStore, None, options))

    def get_worker(self, name: str, /, **options: Any) -> Worker:
        """Build the worker `name` with `factory(**options)`; errors as `get_provider`."""
        item = self._resolve("worker", name)
        return cast(Worker, self._build(item, Worker, None, options))

    def get_environment(self, name: str, /, *args: Any, **options: Any) -> Environment:
        """Build the environment `name` with `factory(*args, **options)`.

        Raises:
            UnknownEnvironmentError: no plugin registered that environment.
            NameConflictError: two plugins registered it.
            PluginFactoryError: the factory raised (other than a `layer0.EnvError`)
                or did not return a `layer0.Environment`.
            layer0.EnvError: the environment refused, e.g. its sandbox is not installed.
        """
        item = self._resolve("environment", name)
        return cast(Environment, self._build(item, Environment, None, options, args))

    def get_orchestrator(self, name: str, /, **options: Any) -> Orchestrator:
        """Build the orchestrator `name` with `factory(**options)`; errors as `get_provider`."""
        item = self._resolve("orchestrator", name)
        return cast(Orchestrator, self._build(item, Orchestrator, None, options))

    def registered_hooks(self) -> list[PluginHook]:
        """Return every plugin hook: plugins in load order, then each plugin's own order."""
        return [hook for loaded in self._loaded.values() for hook in loaded.contributions.hooks]

    def registered_tools(self) -> list[PluginTool]:
        """Return every plugin tool: plugins in load order, then each plugin's own order."""
        return [tool for loaded in self._loaded.values() for tool in loaded.contributions.tools]

    def approval_policy(self) -> ApprovalPolicy | None:
        """Return the plugins' approval policies as one (None: no plugin registered one)."""
        loaded = self._loaded.values()
        policies = [p for plugin in loaded for p in plugin.contributions.approval_policies]
        return ApprovalPolicy.combine(*policies)

    def registered_guardrails(self) -> list[InputGuardrail | OutputGuardrail]:
        """Return every plugin guardrail: plugins in load order, then each plugin's own order."""
        return [g for loaded in self._loaded.values() for g in loaded.contributions.guardrails]

    def registered_output_validators(self) -> list[OutputValidator]:
        """Return every plugin output validator: plugins in load order, each in its own order."""
        loaded = self._loaded.values()
        return [v for plugin in loaded for v in plugin.contributions.output_validators]

    def output_type_named(self, name: str) -> OutputSpec[Any]:
        """Return the output type a plugin registered as `name` (`register_output_types`).

        Raises:
            UnknownOutputTypeError: no plugin registered the name.
            NameConflictError: two plugins registered it.
        """
        loaded = self._loaded.values()
        types = [t for plugin in loaded for t in plugin.contributions.output_types]
        matches = [t for t in types if t.name == name]
        if not matches:
            available = [t.name for t in types]
            raise UnknownOutputTypeError(name, available=available, failures=self._suspects(name))
        if len(matches) > 1:
            raise self._conflict("output type", name, [t.plugin for t in matches])
        return matches[0].spec

    def output_types(self) -> dict[str, OutputSpec[Any]]:
        """Return the output types plugins registered, by name; a name two registered is left out.

        Such a name is in `conflicts()`, and `output_type_named` raises naming the plugins.
        """
        types = [t for plugin in self._loaded.values() for t in plugin.contributions.output_types]
        counts = Counter(t.name for t in types)
        return {t.name: t.spec for t in types if counts[t.name] == 1}

    def tools_by_name(self, names: Iterable[str]) -> list[ToolDyn | ToolSource]:
        """Return the plugin tools (or tool sources) called `names`, in that order.

        Raises:
            UnknownToolError: no plugin registered one of the names.
            NameConflictError: two plugins registered one of the names.
        """
        tools = self.registered_tools()
        found: list[ToolDyn | ToolSource] = []
        for name in names:
            matches = [tool for tool in tools if tool.name == name]
            if not matches:
                available = [tool.name for tool in tools]
                raise UnknownToolError(name, available=available, failures=self._suspects(name))
            if len(matches) > 1:
                raise self._conflict("tool", name, [tool.plugin for tool in matches])
            found.append(matches[0].tool)
        return found

    def build_hook_registry(self, registry: HookRegistry | None = None) -> HookRegistry:
        """Add every plugin hook to `registry` (or a new one) in `registered_hooks()` order."""
        registry = HookRegistry() if registry is None else registry
        for hook in self.registered_hooks():
            registry.add(hook.hook, name=hook.name, observer=hook.observer)
        return registry

    # --- helpers ----------------------------------------------------------------

    def _resolve(self, kind: FactoryKind, name: str) -> Registered:
        matches = [
            item
            for loaded in self._loaded.values()
            for item in loaded.contributions.factories
            if item.kind == kind and item.answers_to(name)
        ]
        if not matches:
            available = self._names(kind)
            raise _UNKNOWN[kind](name, available=available, failures=self._suspects(name))
        if len(matches) > 1:
            raise self._conflict(_LABELS[kind], name, [item.plugin for item in matches])
        return matches[0]

    def _build(
        self,
        item: Registered,
        expected: type,
        model: str | None,
        options: Mapping[str, Any],
        positional: tuple[Any, ...] = (),
    ) -> object:
        label = _LABELS[item.kind]
        args = positional if model is None else (model, *positional)
        try:
            built = item.factory(*args, **options)
        except (PluginError, ProviderError, EnvError):
            raise
        except Exception as exc:
            reason = f"failed to build: {type(exc).__name__}: {exc}"
            raise PluginFactoryError(label, item.name, plugin=item.plugin, reason=reason) from exc
        if not isinstance(built, expected):
            reason = f"built a {type(built).__name__}, which is not a {expected.__name__}"
            raise PluginFactoryError(label, item.name, plugin=item.plugin, reason=reason)
        return built

    def names(self, kind: FactoryKind) -> list[str]:
        """Return the sorted names (aliases included) registered for `kind`."""
        return self._names(kind)

    def _names(self, kind: FactoryKind) -> list[str]:
        names = {
            name
            for loaded in self._loaded.values()
            for item in loaded.contributions.factories
            if item.kind == kind
            for name in (item.name, *item.aliases)
        }
        return sorted(names)

    def _suspects(self, name: str) -> list[PluginFailure]:
        """Failed plugins whose entry-point or distribution name contains `name`."""
        wanted = normalize_name(name)
        return [
            failure
            for failure in self._failures
            if wanted in normalize_name(failure.name)
            or wanted in normalize_name(failure.distribution or "")
        ]

    def _conflict(self, kind: str, name: str, plugins: Iterable[str]) -> NameConflictError:
        labels = [self._loaded[plugin].origin.label() for plugin in plugins]
        error = ProviderConflictError if kind == "provider" else NameConflictError
        return error(kind, name, plugins=labels)


def _check_hooks(pm: pluggy.PluginManager, plugin: object) -> tuple[str, ...]:
    """Return the hooks `plugin` implements; fail on unknown ones (naming the likely one)."""
    callers = pm.get_hookcallers(plugin) or []
    if not callers:
        raise pluggy.PluginValidationError(
            plugin, "it implements no neuron_turn hook; mark them with @neuron_turn.hookimpl"
        )
    for caller in callers:
        if not caller.has_spec():
            close = difflib.get_close_matches(caller.name, hookspecs.HOOK_NAMES, n=1)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else "known: " + ", ".join(hookspecs.HOOK_NAMES)
            )
            raise pluggy.PluginValidationError(plugin, f"unknown hook {caller.name!r} ({hint})")
    pm.check_pending()
    return tuple(name for name in hookspecs.HOOK_NAMES if any(c.name == name for c in callers))


def _builtin_origin() -> PluginOrigin:
    try:
        version: str | None = importlib.metadata.version("neuron-turn")
    except importlib.metadata.PackageNotFoundError:
        version = None
    return PluginOrigin(_builtin_plugin.NAME, distribution="neuron-turn", version=version)
