"""Plugin hook specifications and markers (pluggy project `neuron_turn`).

Every spec follows the `register_*(register)` idiom: once, when the plugin
manager first loads plugins, the host calls each plugin's implementation with
a `register` callback, and the plugin calls it once per thing it offers.
Plugin authors import only `neuron_turn.hookimpl` and the `Register*`
Protocols below (annotate `register` with them and mypy checks the calls).

An implementation receives only the arguments it names, and arguments with
defaults are never passed; specs therefore evolve only by adding arguments,
never by renaming or removing one, so old plugins keep working.

A plugin is a module (or object) whose entry point, in the group
`neuron_turn`, names it::

    [project.entry-points.neuron_turn]
    provider-echo = "neuron_provider_echo.plugin"

Point the entry point at a small `plugin` module holding only the
hookimpls, and do heavy imports inside the factories it registers, so
listing plugins stays cheap. Use the distribution name minus `neuron-` as the
entry-point name: entry-point names must be unique across distributions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pluggy

from layer0 import Environment, Hook, Orchestrator, StateStore
from neuron_tool.source import ToolSource
from neuron_tool.tool import ToolDyn

from ..loop.approval import ApprovalPolicy
from ..loop.context import ContextStrategy
from ..loop.guardrails import InputGuardrail, OutputGuardrail
from ..loop.output import OutputType
from ..loop.output_validators import OutputValidator
from ..loop.provider import Provider
from .worker import Worker

__all__ = [
    "HOOK_NAMES",
    "PROJECT",
    "RegisterApprovalPolicy",
    "RegisterContextStrategy",
    "RegisterEnvironment",
    "RegisterGuardrail",
    "RegisterHook",
    "RegisterOrchestrator",
    "RegisterOutputType",
    "RegisterProvider",
    "RegisterStateStore",
    "RegisterTool",
    "RegisterWorker",
    "hookimpl",
    "hookspec",
]

PROJECT = "neuron_turn"
"""The pluggy project name, entry-point group and marker name."""

hookspec = pluggy.HookspecMarker(PROJECT)
"""Marks the host's hook specifications (internal: only this module defines specs)."""

hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marks a plugin's hook implementations: `@neuron_turn.hookimpl`."""


# --- the register callbacks -------------------------------------------------


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
        """Offer provider `name` (and `aliases`); `factory(model, **options)` builds one."""
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

    def __call__(self, tool: ToolDyn | ToolSource, /) -> None:
        """Offer `tool` (or a tool source, by its `name`) under its own name."""
        ...


class RegisterApprovalPolicy(Protocol):
    """The `register` callback of `register_approval_policies`."""

    def __call__(self, policy: ApprovalPolicy, /) -> None:
        """Hold the calls `policy` selects for a person's approval, in every turn built here."""
        ...


class RegisterGuardrail(Protocol):
    """The `register` callback of `register_guardrails`."""

    def __call__(self, guardrail: InputGuardrail | OutputGuardrail, /) -> None:
        """Check the message or the answer of every turn built here with `guardrail`."""
        ...


class RegisterOutputValidator(Protocol):
    """The `register` callback of `register_output_validators`."""

    def __call__(self, validator: OutputValidator, /) -> None:
        """Check the final answer of every turn built here with `validator`."""
        ...


class RegisterOutputType(Protocol):
    """The `register` callback of `register_output_types`."""

    def __call__(self, name: str, output_type: OutputType[Any], /) -> None:
        """Offer `output_type` (anything `output_type=` takes) as `name`."""
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


class RegisterEnvironment(Protocol):
    """The `register` callback of `register_environments`."""

    def __call__(self, name: str, factory: Callable[..., Environment], /) -> None:
        """Offer environment `name`; `factory(*args, **options)` builds one."""
        ...


class RegisterWorker(Protocol):
    """The `register` callback of `register_workers`."""

    def __call__(self, name: str, factory: Callable[..., Worker], /) -> None:
        """Offer the worker of orchestrator `name`; `factory(**options)` builds one."""
        ...


# --- models -----------------------------------------------------------------


@hookspec
def register_providers(register: RegisterProvider) -> None:
    """Offer model providers, which users address as `"<name>:<model>"`.

    Called once per plugin, when the plugin manager first loads plugins. The
    factory is not called then: `get_provider("<name>:<model>", **options)`
    calls `factory(model, **options)` each time a provider is asked for, so
    import SDKs and HTTP clients inside the factory, not at module level.
    The factory may raise `ProviderAuthenticationError` when a key is missing.

    Two plugins registering the same name (or alias) are both kept; looking
    that name up raises `ProviderConflictError` naming both, and every other
    name keeps working. Names may not contain `:`.

    Args:
        register: Call `register(name, factory, aliases=())` once per provider.

    Example:
        from neuron_turn import (
            ProviderRequest,
            ProviderResponse,
            RegisterProvider,
            TextPart,
            hookimpl,
        )


        class EchoProvider:
            "Answers with the text of the last message."

            def __init__(self, model: str) -> None:
                self.model = model

            async def complete(self, request: ProviderRequest) -> ProviderResponse:
                last = request.messages[-1].content[-1]
                text = last.text if isinstance(last, TextPart) else ""
                return ProviderResponse(
                    content=[TextPart(text)], stop_reason="end_turn", model=self.model
                )


        @hookimpl
        def register_providers(register: RegisterProvider) -> None:
            register("echo", EchoProvider, aliases=["parrot"])
    """


@hookspec
def register_context_strategies(register: RegisterContextStrategy) -> None:
    """Offer context strategies, which decide when and how to shrink a conversation.

    Called once per plugin, when the plugin manager first loads plugins.
    `get_context_strategy(name, **options)` calls `factory(**options)` each
    time a strategy is asked for. The built-in plugin registers
    `sliding_window` and `none` before any other plugin loads.

    Two plugins registering the same name are both kept; looking that name up
    raises `NameConflictError` naming both.

    Args:
        register: Call `register(name, factory)` once per strategy.

    Example:
        from collections.abc import Sequence

        from neuron_turn import ProviderMessage, RegisterContextStrategy, hookimpl


        class KeepLast:
            "Keeps only the last `count` messages (ignores tool pairing: a sketch)."

            def __init__(self, *, count: int = 10) -> None:
                self.count = count

            def token_estimate(self, messages: Sequence[ProviderMessage]) -> int:
                return 100 * len(messages)

            def should_compact(self, messages: Sequence[ProviderMessage], limit: int) -> bool:
                return len(messages) > self.count

            async def compact(self, messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
                return list(messages[-self.count :])


        @hookimpl
        def register_context_strategies(register: RegisterContextStrategy) -> None:
            register("keep_last", KeepLast)
    """


# --- turn extensions --------------------------------------------------------


@hookspec
def register_hooks(register: RegisterHook) -> None:
    """Offer runtime hooks (`layer0.Hook`) added to every turn built from plugins.

    Called once per plugin, when the plugin manager first loads plugins; the
    hook objects are shared by every turn, so keep per-turn state out of them
    (or make it safe to share). `NeuronTurn.from_plugins` adds them in plugin
    load order (the built-in plugin, then entry points sorted by name), and
    within a plugin in the order it calls `register`.

    A hook's name defaults to its `name` attribute, else its class name, and
    is qualified with the plugin's name (`"<plugin>.<name>"`), so hooks of two
    plugins never clash; one plugin registering two hooks under one name fails
    to load.

    Args:
        register: Call `register(hook, name=None, observer=False)` once per
            hook. An observer always runs and its action is ignored.

    Example:
        from collections.abc import Set

        from layer0 import Continue, HookAction, HookContext, HookPoint
        from neuron_turn import RegisterHook, hookimpl


        class CountModelCalls:
            "Counts model calls; an observer, so it never changes the turn."

            points: Set[HookPoint] = frozenset({HookPoint.PRE_INFERENCE})

            def __init__(self) -> None:
                self.calls = 0

            async def on_event(self, ctx: HookContext) -> HookAction:
                self.calls += 1
                return Continue()


        @hookimpl
        def register_hooks(register: RegisterHook) -> None:
            register(CountModelCalls(), name="count_model_calls", observer=True)
    """


@hookspec
def register_tools(register: RegisterTool) -> None:
    """Offer tools (`neuron_tool.ToolDyn`) that turns built from plugins may use by name.

    Called once per plugin, when the plugin manager first loads plugins. A
    tool is offered, not imposed: `NeuronTurn.from_plugins(tools=[...])` and
    `neuron-turn run --tool NAME` pick tools by their names. A tool source
    (`@neuron_tool.tool_source`, anything with `tools_for(context)` and a
    `name`) may be registered too: picked by its name, it gives each run its
    tools (`neuron_tool.source`).

    Two plugins registering a tool of the same name are both kept; asking for
    that name raises `NameConflictError` naming both.

    Args:
        register: Call `register(tool)` once per tool.

    Example:
        from neuron_tool import tool
        from neuron_turn import RegisterTool, hookimpl


        @tool
        def add(a: int, b: int) -> int:
            "Add two integers."
            return a + b


        @hookimpl
        def register_tools(register: RegisterTool) -> None:
            register(add)
    """


@hookspec
def register_approval_policies(register: RegisterApprovalPolicy) -> None:
    """Offer approval policies: tool calls that wait for a person's "yes" before they run.

    Called once per plugin, when the plugin manager first loads plugins.
    `NeuronTurn.from_plugins` combines every registered policy with the one in
    its config (`NeuronTurnConfig.approval`, which `neuron-turn run
    --approve-tool` sets): a call waits when any of them holds it, so a plugin
    can add calls that need approval but never exempt one. A predicate that
    raises holds the call.

    Two plugins registering policies are both kept, in load order; policies
    have no names, so they never conflict.

    Args:
        register: Call `register(policy)` once per `ApprovalPolicy`.

    Example:
        import posixpath

        from pydantic import JsonValue

        from neuron_turn import ApprovalPolicy, RegisterApprovalPolicy, hookimpl


        def outside_workspace(name: str, input: JsonValue) -> bool:
            "A write whose path leaves the workspace directory."
            if name != "write_file" or not isinstance(input, dict):
                return False
            path = posixpath.normpath(str(input.get("path", "")))
            return path.startswith(("/", "..")) or path == "."


        @hookimpl
        def register_approval_policies(register: RegisterApprovalPolicy) -> None:
            register(ApprovalPolicy.of(["shell", "delete_*"]))
            register(ApprovalPolicy.of(predicate=outside_workspace))
    """


@hookspec
def register_guardrails(register: RegisterGuardrail) -> None:
    """Offer guardrails: checks of every turn's message and answer that stop the turn.

    Called once per plugin, when the plugin manager first loads plugins.
    `NeuronTurn.from_plugins` adds every registered guardrail to those in its
    config (`NeuronTurnConfig.guardrails`), so `neuron-turn run` and a
    worker's turns are checked too; a plugin can add checks but never take
    one away. See `neuron_turn.loop.guardrails` for when they run and what a
    trip does.

    Two plugins registering guardrails of one name are both kept and both
    run; the name only says which one tripped.

    Args:
        register: Call `register(guardrail)` once per `InputGuardrail` or
            `OutputGuardrail` (`@input_guardrail`, `@output_guardrail`).

    Example:
        from typing import Any

        from layer0 import Content
        from neuron_tool import RunContext
        from neuron_turn import RegisterGuardrail, Tripwire, hookimpl, input_guardrail


        @input_guardrail
        async def no_card_numbers(context: RunContext[Any], message: Content) -> Tripwire | None:
            digits = [c for c in message.as_text() if c.isdigit()]
            if len(digits) >= 16:
                return Tripwire("the message may hold a card number")
            return None


        @hookimpl
        def register_guardrails(register: RegisterGuardrail) -> None:
            register(no_card_numbers)
    """


@hookspec
def register_output_validators(register: RegisterOutputValidator) -> None:
    """Offer output validators: checks of every turn's final answer that may send it back.

    Called once per plugin, when the plugin manager first loads plugins.
    `NeuronTurn.from_plugins` runs every registered validator after those in
    its config (`NeuronTurnConfig.output_validators`), plugins in load order,
    so `neuron-turn run`, a worker's turns and a sandboxed child's are checked
    too. See `neuron_turn.loop.output_validators` for what a validator returns
    and what sending an answer back does.

    Two plugins registering validators of one name are both kept and both run,
    in load order; the name only says which one failed.

    Args:
        register: Call `register(validator)` once per `OutputValidator`
            (`@output_validator`).

    Example:
        from typing import Any

        from neuron_tool import ModelRetry, RunContext
        from neuron_turn import RegisterOutputValidator, hookimpl, output_validator


        @output_validator
        async def no_placeholders(context: RunContext[Any], answer: Any) -> Any:
            if "TODO" in str(answer):
                raise ModelRetry("finish the answer: it still says TODO")
            return answer


        @hookimpl
        def register_output_validators(register: RegisterOutputValidator) -> None:
            register(no_placeholders)
    """


# --- running turns ----------------------------------------------------------


@hookspec
def register_output_types(register: RegisterOutputType) -> None:
    """Offer output types by name, for turns that ask for one by it.

    Called once per plugin, when the plugin manager first loads plugins.
    `NeuronTurn.from_plugins(output_type="refund")` builds a turn typed by
    what a plugin registered as `refund`: a pydantic model, a dataclass, a
    choice of types, an output function, a `TextOutput`, an `OutputSpec`:
    anything `output_type=` takes, checked when the plugin loads (one that
    cannot be an output type fails the plugin's hook, naming it). A worker, or
    any code that names its output instead of importing it, gets the type.

    Two plugins registering one name make it ambiguous: asking for it raises
    `NameConflictError` naming both, and other names still work.

    Args:
        register: Call `register(name, output_type)` once per output type; a
            name is letters, digits, `_`, `-` or `.`, starting with a letter or
            digit, once per plugin.

    Example:
        from pydantic import BaseModel

        from neuron_turn import RegisterOutputType, hookimpl


        class Refund(BaseModel):
            order: str
            amount_eur: float


        @hookimpl
        def register_output_types(register: RegisterOutputType) -> None:
            register("refund", Refund)
    """


@hookspec
def register_state_stores(register: RegisterStateStore) -> None:
    """Offer state stores (`layer0.StateStore`), looked up by name.

    Called once per plugin, when the plugin manager first loads plugins.
    `get_state_store(name, **options)` calls `factory(**options)` each time a
    store is asked for (the options are the store's own: a path, a URL).

    Two plugins registering the same name are both kept; looking that name up
    raises `NameConflictError` naming both.

    Args:
        register: Call `register(name, factory)` once per store.

    Example:
        from pydantic import JsonValue

        from layer0 import Scope, SearchResult
        from neuron_turn import RegisterStateStore, hookimpl


        class MemoryStore:
            "Keeps state in a dict; gone when the process ends."

            def __init__(self) -> None:
                self.data: dict[tuple[str, str], JsonValue] = {}

            async def read(self, scope: Scope, key: str) -> JsonValue | None:
                return self.data.get((repr(scope), key))

            async def list(self, scope: Scope, prefix: str) -> list[str]:
                return [k for s, k in self.data if s == repr(scope) and k.startswith(prefix)]

            async def search(self, scope: Scope, query: str, limit: int) -> list[SearchResult]:
                return []

            async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
                self.data[(repr(scope), key)] = value

            async def delete(self, scope: Scope, key: str) -> None:
                self.data.pop((repr(scope), key), None)


        @hookimpl
        def register_state_stores(register: RegisterStateStore) -> None:
            register("memory", MemoryStore)
    """


@hookspec
def register_orchestrators(register: RegisterOrchestrator) -> None:
    """Offer orchestrators (`layer0.Orchestrator`), looked up by name.

    Called once per plugin, when the plugin manager first loads plugins.
    `get_orchestrator(name, **options)` calls `factory(**options)` each time
    an orchestrator is asked for.

    Two plugins registering the same name are both kept; looking that name up
    raises `NameConflictError` naming both.

    Args:
        register: Call `register(name, factory)` once per orchestrator.

    Example:
        from collections.abc import Mapping, Sequence

        from pydantic import JsonValue

        from layer0 import (
            AgentId,
            AgentNotFound,
            OrchError,
            QueryPayload,
            SignalPayload,
            Turn,
            TurnInput,
            TurnOutput,
            WorkflowId,
            WorkflowNotFound,
        )
        from neuron_turn import RegisterOrchestrator, hookimpl


        class InlineOrchestrator:
            "Runs each dispatch in this process, one after the other; no workflows."

            def __init__(self, *, agents: Mapping[AgentId, Turn] | None = None) -> None:
                self.agents = dict(agents or {})

            async def dispatch(self, agent: AgentId, input: TurnInput) -> TurnOutput:
                if agent not in self.agents:
                    raise AgentNotFound(agent)
                return await self.agents[agent].execute(input)

            async def dispatch_many(
                self, tasks: Sequence[tuple[AgentId, TurnInput]]
            ) -> list[TurnOutput | OrchError]:
                results: list[TurnOutput | OrchError] = []
                for agent, input in tasks:
                    try:
                        results.append(await self.dispatch(agent, input))
                    except OrchError as exc:
                        results.append(exc)
                return results

            async def signal(self, target: WorkflowId, payload: SignalPayload) -> None:
                raise WorkflowNotFound(target)

            async def query(self, target: WorkflowId, payload: QueryPayload) -> JsonValue:
                raise WorkflowNotFound(target)


        @hookimpl
        def register_orchestrators(register: RegisterOrchestrator) -> None:
            register("inline", InlineOrchestrator)
    """


@hookspec
def register_workers(register: RegisterWorker) -> None:
    """Offer workers: processes that host agents for an orchestrator running turns elsewhere.

    Called once per plugin, when the plugin manager first loads plugins.
    `get_worker(name, **options)` calls `factory(**options)`; `neuron-turn
    worker --orchestrator NAME` then awaits `worker.run(agents, store)` until
    interrupted. Register a worker under the name of the orchestrator it
    serves.

    Two plugins registering the same name are both kept; looking that name up
    raises `NameConflictError` naming both.

    Args:
        register: Call `register(name, factory)` once per kind of worker.

    Example:
        import asyncio
        from collections.abc import Mapping

        from layer0 import AgentId, StateStore, Turn
        from neuron_turn import RegisterWorker, hookimpl


        class IdleWorker:
            "Hosts agents for an orchestrator that never sends work: waits to be stopped."

            def __init__(self, *, queue: str = "default") -> None:
                self.queue = queue
                self.hosted: list[AgentId] = []

            async def run(self, agents: Mapping[AgentId, Turn], store: StateStore) -> None:
                self.hosted = sorted(agents)
                await asyncio.Event().wait()


        @hookimpl
        def register_workers(register: RegisterWorker) -> None:
            register("idle", IdleWorker)
    """


@hookspec
def register_environments(register: RegisterEnvironment) -> None:
    """Offer environments (`layer0.Environment`): where and how isolated an agent's turn runs.

    Called once per plugin, when the plugin manager first loads plugins.
    `get_environment(name, *args, **options)` calls `factory(*args, **options)`
    each time an environment is asked for (the arguments are the
    environment's own: the turn or recipe it runs, its limits). An
    environment must refuse, with a `layer0.ProvisionFailed`, what an
    `EnvironmentSpec` asks that it cannot enforce, never ignore it.

    Two plugins registering the same name are both kept; looking that name up
    raises `NameConflictError` naming both.

    Args:
        register: Call `register(name, factory)` once per environment.

    Example:
        from layer0 import EnvironmentSpec, ProvisionFailed, Turn, TurnInput, TurnOutput
        from neuron_turn import RegisterEnvironment, hookimpl


        class InlineEnvironment:
            "Runs the turn in this process; refuses any isolation, which it cannot give."

            def __init__(self, turn: Turn) -> None:
                self.turn = turn

            async def run(self, input: TurnInput, spec: EnvironmentSpec) -> TurnOutput:
                if spec.isolation or spec.network or spec.resources or spec.credentials:
                    raise ProvisionFailed("inline runs in-process: it cannot isolate or limit")
                return await self.turn.execute(input)


        @hookimpl
        def register_environments(register: RegisterEnvironment) -> None:
            register("inline", InlineEnvironment)
    """


HOOK_NAMES: tuple[str, ...] = (
    "register_providers",
    "register_context_strategies",
    "register_hooks",
    "register_tools",
    "register_approval_policies",
    "register_guardrails",
    "register_output_validators",
    "register_output_types",
    "register_state_stores",
    "register_orchestrators",
    "register_workers",
    "register_environments",
)
"""The names of every hook specification above, in the order the host calls them."""
