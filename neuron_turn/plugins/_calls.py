"""Calling one plugin's `register_*` hooks, one implementation at a time.

pluggy's own hook call stops at the first exception and cannot tell which
plugin registered what; calling each implementation ourselves with a
`register` closure that knows the plugin gives both isolation and provenance.
The closures check what they are given, so a bad registration fails inside
the plugin's own hook and is reported against that plugin.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, Final

import pluggy

from layer0 import Hook
from neuron_hooks import HookRegistry
from neuron_tool.source import ToolSource, is_tool_source
from neuron_tool.tool import ToolDyn

from ..loop.approval import ApprovalPolicy
from ..loop.guardrails import InputGuardrail, OutputGuardrail
from ..loop.output import OutputType, output_spec
from ..loop.output_validators import OutputValidator
from ._records import (
    Contributions,
    FactoryKind,
    PluginHook,
    PluginOutputType,
    PluginTool,
    Registered,
)
from .errors import PluginHookError
from .hookspecs import HOOK_NAMES

_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


def collect(pm: pluggy.PluginManager, plugin: str) -> Contributions:
    """Call each `register_*` implementation of `plugin`, in `HOOK_NAMES` order.

    Raises:
        PluginHookError: an implementation raised (including a bad registration).
    """
    found = Contributions()
    callbacks = _callbacks(found, plugin)
    for hook_name in HOOK_NAMES:
        caller: pluggy.HookCaller = getattr(pm.hook, hook_name)
        for impl in caller.get_hookimpls():
            if impl.plugin_name == plugin:
                try:
                    _call(impl, callbacks[hook_name])
                except Exception as exc:
                    raise PluginHookError(hook_name, exc) from exc
    return found


def _call(impl: pluggy.HookImpl, register: Callable[..., None]) -> None:
    if impl.wrapper or impl.hookwrapper:
        raise TypeError("registration hooks cannot be wrappers; drop wrapper=True")
    arguments = {"register": register}
    result = impl.function(*(arguments[name] for name in impl.argnames))
    if inspect.iscoroutine(result):
        result.close()
        raise TypeError("registration hooks must be plain functions, not `async def`")


def _callbacks(found: Contributions, plugin: str) -> dict[str, Callable[..., None]]:
    def named(kind: FactoryKind) -> Callable[..., None]:
        def register(name: str, factory: Callable[..., object], /) -> None:
            _add_factory(found, Registered(kind, name, factory, plugin))

        return register

    def register_provider(
        name: str, factory: Callable[..., object], /, *, aliases: Sequence[str] = ()
    ) -> None:
        _add_factory(found, Registered("provider", name, factory, plugin, tuple(aliases)))

    def register_hook(hook: Hook, /, *, name: str | None = None, observer: bool = False) -> None:
        found.hooks.append(_plugin_hook(found, plugin, hook, name, observer=observer))

    def register_tool(tool: ToolDyn | ToolSource, /) -> None:
        found.tools.append(_plugin_tool(found, plugin, tool))

    def register_approval_policy(policy: ApprovalPolicy, /) -> None:
        if not isinstance(policy, ApprovalPolicy):
            raise TypeError(
                f"{policy!r} is not a neuron_turn.ApprovalPolicy (build one with ApprovalPolicy.of)"
            )
        found.approval_policies.append(policy)

    def register_guardrail(guardrail: InputGuardrail | OutputGuardrail, /) -> None:
        if not isinstance(guardrail, InputGuardrail | OutputGuardrail):
            raise TypeError(
                f"{guardrail!r} is not a guardrail (make one with @input_guardrail or "
                "@output_guardrail)"
            )
        found.guardrails.append(guardrail)

    def register_output_validator(validator: OutputValidator, /) -> None:
        if not isinstance(validator, OutputValidator):
            raise TypeError(
                f"{validator!r} is not an output validator (make one with @output_validator)"
            )
        found.output_validators.append(validator)

    def register_output_type(name: str, output_type: OutputType[Any], /) -> None:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(
                f"output type name {name!r} is not valid: use letters, digits, '_', '-' or "
                "'.', starting with a letter or digit"
            )
        if any(registered.name == name for registered in found.output_types):
            raise ValueError(f"output type {name!r} is registered twice by this plugin")
        # Compiled now: a type that cannot be one fails this plugin's hook, naming it.
        found.output_types.append(PluginOutputType(name, output_spec(output_type), plugin))

    return {
        "register_providers": register_provider,
        "register_context_strategies": named("context_strategy"),
        "register_hooks": register_hook,
        "register_tools": register_tool,
        "register_approval_policies": register_approval_policy,
        "register_guardrails": register_guardrail,
        "register_output_validators": register_output_validator,
        "register_output_types": register_output_type,
        "register_state_stores": named("state_store"),
        "register_orchestrators": named("orchestrator"),
        "register_workers": named("worker"),
        "register_environments": named("environment"),
    }


def _add_factory(found: Contributions, item: Registered) -> None:
    label = item.kind.replace("_", " ")
    names = (item.name, *item.aliases)
    for index, name in enumerate(names):
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(
                f"{label} name {name!r} is not valid: use letters, digits, '_', '-' or '.', "
                "starting with a letter or digit"
            )
        taken = name in names[:index] or any(
            other.kind == item.kind and other.answers_to(name) for other in found.factories
        )
        if taken:
            raise ValueError(f"{label} {name!r} is registered twice by this plugin")
    if not callable(item.factory):
        raise TypeError(
            f"the factory of {label} {item.name!r} is a {type(item.factory).__name__}, "
            "which is not callable"
        )
    found.factories.append(item)


def _plugin_hook(
    found: Contributions, plugin: str, hook: Hook, name: str | None, *, observer: bool
) -> PluginHook:
    own = name if name is not None else _default_hook_name(hook)
    if not isinstance(hook, Hook) or not inspect.iscoroutinefunction(hook.on_event):
        raise TypeError(
            f"hook {own!r} is a {type(hook).__name__}, not a layer0.Hook "
            "(it needs `points` and an `async def on_event`)"
        )
    qualified = f"{plugin}.{own}"
    # Checked now, by the registry every turn adds it to: a point misspelt would
    # otherwise pass here and fail every turn built from the plugins, not just this
    # plugin's load.
    HookRegistry().add(hook, name=qualified)
    if any(other.name == qualified for other in found.hooks):
        raise ValueError(f"hook {own!r} is registered twice by this plugin; pass name=")
    return PluginHook(qualified, hook, observer, plugin)


def _plugin_tool(found: Contributions, plugin: str, tool: ToolDyn | ToolSource) -> PluginTool:
    name = getattr(tool, "name", None)  # a source's is not in its protocol: checked here
    if is_tool_source(tool):
        if not isinstance(name, str):
            raise TypeError(f"the tool source {tool!r} has no `name` to be picked by")
    elif not isinstance(tool, ToolDyn):
        raise TypeError(
            f"{tool!r} is not a neuron_tool.ToolDyn (use @neuron_tool.tool) nor a tool source "
            "(@neuron_tool.tool_source)"
        )
    assert isinstance(name, str)
    if any(other.name == name for other in found.tools):
        raise ValueError(f"tool {name!r} is registered twice by this plugin")
    return PluginTool(name, tool, plugin)


def _default_hook_name(hook: object) -> str:
    # The same default HookRegistry.add uses: the hook's own name, else its class name.
    own = getattr(hook, "name", None)
    return own if isinstance(own, str) and own else type(hook).__name__
