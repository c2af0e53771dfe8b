"""Records of the plugin manager: where a plugin came from, what it registered, how it failed.

Plain frozen dataclasses, re-exported by `neuron_turn.plugins`; the listing
command turns them into text or JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from pydantic import JsonValue

from layer0 import Hook
from neuron_tool.source import ToolSource
from neuron_tool.tool import ToolDyn

from ..loop.approval import ApprovalPolicy
from ..loop.guardrails import InputGuardrail, OutputGuardrail
from ..loop.output import OutputSpec
from ..loop.output_validators import OutputValidator
from .hookspecs import PROJECT

FactoryKind: TypeAlias = Literal[
    "provider", "context_strategy", "state_store", "orchestrator", "worker", "environment"
]
"""The kinds of thing plugins register as a named factory."""

PLURALS: Final[dict[FactoryKind, str]] = {
    "provider": "providers",
    "context_strategy": "context_strategies",
    "state_store": "state_stores",
    "orchestrator": "orchestrators",
    "worker": "workers",
    "environment": "environments",
}
"""Each factory kind's key in listings, as in the `register_<plural>` hook names."""


@dataclass(frozen=True, slots=True)
class PluginOrigin:
    """Where a plugin came from: its name, distribution and entry point (when known)."""

    name: str
    """The plugin's name: its entry-point name, or the name it was registered under."""
    distribution: str | None = None
    version: str | None = None
    entry_point: str | None = None
    """The entry point's value, `module` or `module:attr`."""

    def label(self) -> str:
        """Return `'name' (distribution version)`, for messages that name the plugin."""
        if self.distribution is None:
            return repr(self.name)
        return f"{self.name!r} ({self.distribution} {self.version or '?'})"

    def describe(self) -> str:
        """Return the plugin named with its distribution, version and entry point."""
        details = []
        if self.distribution is not None:
            details.append(f"{self.distribution} {self.version or '?'}")
        if self.entry_point is not None:
            details.append(f"entry point {PROJECT}: {self.name} = {self.entry_point}")
        suffix = f" ({', '.join(details)})" if details else ""
        return f"Plugin {self.name!r}{suffix}"


@dataclass(frozen=True, slots=True)
class PluginFailure:
    """A plugin that failed to load, and why; it was not registered, the others were.

    `stage` says where it failed: `"import"` (loading the entry point),
    `"duplicate"` (its name was taken), `"validation"` (pluggy's checks, e.g.
    a misspelled hook) or the name of the registration hook that raised.
    """

    origin: PluginOrigin
    stage: str
    error: Exception

    @property
    def name(self) -> str:
        """The plugin's (entry-point) name."""
        return self.origin.name

    @property
    def distribution(self) -> str | None:
        """The distribution that installed the plugin, if known."""
        return self.origin.distribution

    @property
    def version(self) -> str | None:
        """The distribution's version, if known."""
        return self.origin.version

    @property
    def entry_point(self) -> str | None:
        """The entry point's value (`module:attr`), if the plugin came from one."""
        return self.origin.entry_point

    def reason(self) -> str:
        """Return the error as `Type: message`, prefixed by the hook that raised it."""
        prefix = f"{self.stage} raised " if self.stage.startswith("register_") else ""
        return f"{prefix}{type(self.error).__name__}: {self.error}"

    def describe(self) -> str:
        """Return the one fixed sentence used in warnings, errors and the listing."""
        return f"{self.origin.describe()} failed to load: {self.reason()}"

    def to_json(self) -> dict[str, JsonValue]:
        """Return the failure as JSON, for `neuron-turn plugins --json`."""
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "entry_point": self.entry_point,
            "stage": self.stage,
            "error_type": type(self.error).__name__,
            "error": str(self.error),
        }


@dataclass(frozen=True, slots=True)
class Registered:
    """One named factory a plugin registered (a provider, strategy, store or orchestrator)."""

    kind: FactoryKind
    name: str
    factory: Callable[..., object]
    plugin: str
    aliases: tuple[str, ...] = ()

    def answers_to(self, name: str) -> bool:
        """Whether `name` is this registration's name or one of its aliases."""
        return name == self.name or name in self.aliases


@dataclass(frozen=True, slots=True)
class PluginHook:
    """A runtime hook a plugin registered; `name` is qualified: `"<plugin>.<name>"`."""

    name: str
    hook: Hook
    observer: bool
    plugin: str


@dataclass(frozen=True, slots=True)
class PluginTool:
    """A tool (or a tool source) a plugin registered, under its own name."""

    name: str
    tool: ToolDyn | ToolSource
    plugin: str


@dataclass(frozen=True, slots=True)
class PluginOutputType:
    """An output type a plugin registered by name, compiled when the plugin loaded."""

    name: str
    spec: OutputSpec[Any]
    plugin: str


@dataclass(slots=True)
class Contributions:
    """Everything one plugin registered, in the order it registered it."""

    factories: list[Registered] = field(default_factory=list)
    hooks: list[PluginHook] = field(default_factory=list)
    tools: list[PluginTool] = field(default_factory=list)
    approval_policies: list[ApprovalPolicy] = field(default_factory=list)
    guardrails: list[InputGuardrail | OutputGuardrail] = field(default_factory=list)
    output_validators: list[OutputValidator] = field(default_factory=list)
    output_types: list[PluginOutputType] = field(default_factory=list)

    def names(self) -> dict[str, list[str]]:
        """Return the registered names by kind (plural keys), for the listing."""
        listing: dict[str, list[str]] = {plural: [] for plural in PLURALS.values()}
        for item in self.factories:
            listing[PLURALS[item.kind]].extend((item.name, *item.aliases))
        listing["hooks"] = [hook.name for hook in self.hooks]
        listing["tools"] = [tool.name for tool in self.tools]
        listing["approval_policies"] = [describe_policy(p) for p in self.approval_policies]
        listing["guardrails"] = [f"{g.name} ({_stage(g)})" for g in self.guardrails]
        listing["output_validators"] = [v.name for v in self.output_validators]
        listing["output_types"] = [t.name for t in self.output_types]
        return listing


def _stage(guardrail: InputGuardrail | OutputGuardrail) -> str:
    return "input" if isinstance(guardrail, InputGuardrail) else "output"


def describe_policy(policy: ApprovalPolicy) -> str:
    """Return what `policy` holds, for listings: its tool names or patterns, and a predicate."""
    parts = sorted(policy.tools)
    if policy.predicate is not None:
        parts.append(f"predicate {getattr(policy.predicate, '__name__', 'callable')}")
    return " | ".join(parts) or "nothing"


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """A loaded plugin, for listings: where it came from, its hooks, what it registered."""

    origin: PluginOrigin
    hooks: tuple[str, ...]
    """The hook specifications it implements, e.g. `register_providers`."""
    registered: Mapping[str, tuple[str, ...]]
    """Names it registered by kind: `providers`, `context_strategies`, `state_stores`,
    `orchestrators`, `workers`, `environments`, `hooks`, `tools`, `approval_policies`,
    `guardrails`, `output_validators`."""

    @property
    def name(self) -> str:
        """The plugin's name."""
        return self.origin.name

    def to_json(self) -> dict[str, JsonValue]:
        """Return the plugin as JSON, for `neuron-turn plugins --json`."""
        return {
            "name": self.origin.name,
            "distribution": self.origin.distribution,
            "version": self.origin.version,
            "entry_point": self.origin.entry_point,
            "hooks": list(self.hooks),
            "registered": {kind: list(names) for kind, names in self.registered.items()},
        }
