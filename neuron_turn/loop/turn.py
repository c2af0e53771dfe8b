"""`NeuronTurn`: the ReAct loop implementing `layer0.Turn`.

`execute` reads top to bottom as the steps of turn-loop.md: resolve the
config, read the session history, then call the model, run its tools and
check the limits until the model is done or something stops the turn.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from typing import Any, ClassVar, Final, Generic, cast, overload

from pydantic import JsonValue
from typing_extensions import TypeVar

from layer0 import (
    RECORD_OPTION,
    Content,
    CustomExit,
    DelegateEffect,
    ExitReason,
    Halt,
    HandoffEffect,
    Hook,
    HookAction,
    HookPoint,
    LogEffect,
    LogLevel,
    ModelError,
    NonRetryableError,
    ObserverHalt,
    PartialTurn,
    RetryableError,
    SessionId,
    StateReader,
    TurnConfig,
    TurnError,
    TurnInput,
    TurnOutput,
    usd,
)
from neuron_hooks import DuplicateHookError, HookRegistry
from neuron_tool import (
    ExternalTool,
    FunctionTool,
    ModelRetry,
    RunContext,
    ToolDyn,
    ToolRegistrationError,
    ToolRegistry,
    ToolSchema,
    ToolSource,
    ToolSourceError,
    ToolStepSourceError,
)

from ._blocking import run_blocking
from ._compaction import ContextKeeper, context_limit
from ._convert import (
    content_from_parts,
    is_empty,
    parts_from_content,
)
from ._input_screen import InputScreen
from ._output_follower import OutputFollower
from ._output_round import (
    CALL_OPTIONS_KEY,
    OUTPUT_INVALID,
    CallOptions,
    Calls,
    Finish,
    OutputRound,
    Step,
    read_call_options,
    with_model_settings,
    with_output_type,
    with_usage_limits,
)
from ._output_round import (
    merge_results as merge_pending,
)
from ._overrides import overridden, overriding
from ._recorder import TimelineRecorder, both
from ._run import RunState
from ._run_input import given_history, run_input
from ._stored_history import read_history
from ._tool_input import (
    UNRUN,
    AnsweredCall,
    RefusedCall,
    StreamedCallIds,
    call_ids,
    guard_tool_calls,
)
from ._tool_round import ToolRound, TurnHalted
from ._transcript import Transcript
from ._well_formed import well_formed_content, well_formed_delta
from .agent_tool import agent_tool
from .approval import (
    AWAITING_APPROVAL,
    DECISIONS_KEY,
    ApprovalError,
    ApprovalPolicy,
    AwaitingApprovalError,
    Decision,
    ExternalCallApprovedError,
    MalformedDecisionsError,
    NotAwaitingApprovalError,
    ResumedDelegation,
    check_edited,
    last_assistant,
    match_decisions,
    pending_effect,
    pending_ids,
    pending_in,
    split_decisions,
)
from .capture import claim_capture
from .checkpoint import Checkpoint, current_checkpoint
from .config import NeuronTurnConfig, ResolvedConfig
from .context import ContextStrategy
from .continuation import (
    INTERRUPTED,
    CarriedCounts,
    ContinuationError,
    carried_counts,
    check_continuation,
    continuation_input,
    continues,
    kept_counts_effect,
    read_kept_counts,
)
from .effect_answers import (
    ChecksDecisions,
    answered_form,
    current_answerer,
    delegation_sessions,
)
from .effect_tools import EFFECT_TOOL_NAMES, EffectToolError, declare_effect, effect_tool_schemas
from .events import (
    EffectDeclared,
    HookHalted,
    LimitReached,
    ModelCallDone,
    ModelCallStart,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
    TurnDone,
    TurnEvent,
)
from .external_tools import answered_call, screened_external
from .guardrails import (
    GUARDRAIL_TRIPPED,
    InputGuardrail,
    OutputGuardrail,
    Tripped,
    first_trip,
)
from .hosted_approvals import (
    HOSTED_CALL,
    approval_servers,
    decided_hosted,
    screened_hosted,
)
from .hosted_tools import check_hosted_tools, offered_hosted_tools
from .instructions import Instructions, render_instructions
from .limits import LimitCrossed, UsageLimits, limit_reached
from .memory_tools import MEMORY_TOOL_NAMES, MemoryReader, memory_tool_schemas
from .model_requests import check_model_request
from .model_settings import ModelSettings, StepModelSettingsError
from .observers import TurnStart, start_watches
from .output import (
    OutputMode,
    OutputSpec,
    OutputType,
    OutputTypeError,
    OutputValidationError,
    SupportsOutputModes,
    named_specs,
    output_spec,
    output_value,
)
from .output_validators import SentBack, validated
from .paused_options import paused_options_effect, with_paused_options
from .plugin_source import PluginSource, default_plugin_source
from .provider import (
    ContentPart,
    Provider,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)
from .provider_errors import (
    InvalidRequestError,
    ProviderAuthenticationError,
    ProviderError,
    ProviderResponseError,
)
from .provider_stream import deltas_of, streaming
from .run_result import RunResult, RunSyncError
from .sampling import check_provider_sampling
from .standing import StandingDecision, read_standing, standing_effect, standing_refusal
from .stop_tools import INPUT_STOP_TOOLS, check_stop_tools, stop_result, unoffered_stop_tools
from .stream import TurnStream
from .strict_tools import check_strict_output, check_strict_tools, infers_strict_tools
from .sync_stream import SyncTurnStream
from .thinking import check_provider_thinking
from .tokens import TokenMeter

__all__ = ["NeuronTurn"]

INPUT_EXTERNAL_TOOLS: Final = f"TurnInput.metadata[{CALL_OPTIONS_KEY!r}]['external_tools']"
_LOOP_TOOL_NAMES: Final = EFFECT_TOOL_NAMES | MEMORY_TOOL_NAMES
_WAITS_BESIDE: Final = (
    "Not run: it would wait (for approval, or for the caller), and the turn ended with "
    "its final answer."
)
_HANDOFF_BESIDE: Final = "Not run: a handoff cannot come with a final answer, which ends the turn."
_HOSTED_CALLS: Final = frozenset({HOSTED_CALL})

OutT = TypeVar("OutT", default=str)
_T = TypeVar("_T", default=str)
_G = TypeVar("_G")

# model_construct: literals need no validation, and validating would build the model at import.
_KEEP: Final = object()
"""`override`'s default for `deps`, whose None is a value of its own (no deps)."""
_HANDOFF: Final = CustomExit.model_construct(name="handoff")
_HANDOFF_TOOL: Final = "handoff"
_STUCK: Final = CustomExit.model_construct(name="stuck_detected")
_LIMITS: Final[tuple[ExitReason, ...]] = (
    "max_turns",
    "budget_exhausted",
    "timeout",
    "circuit_breaker",
    _STUCK,
)


class _Exit(Exception):
    """Ends the loop with an exit reason (internal control flow)."""

    def __init__(self, reason: ExitReason) -> None:
        self.reason = reason


def _registry(tools: ToolRegistry | Iterable[ToolDyn | ToolSource] | None) -> ToolRegistry:
    if tools is None:
        return ToolRegistry()
    if isinstance(tools, ToolRegistry):
        return tools
    shape: object = tools  # typed as the caller should pass it; checked as they might
    if not isinstance(shape, Iterable) or isinstance(shape, str | bytes):
        raise TypeError(
            "NeuronTurn(tools=...) takes a ToolRegistry or a list of tools;"
            f" got {type(tools).__name__} (put a single tool in a list)"
        )
    return ToolRegistry(tools)


class NeuronTurn(Generic[OutT]):
    """The ReAct loop: call the model, run the tools it asks for, repeat.

    One instance holds only configuration and collaborators; every call of
    `execute` keeps its state to itself, so one instance can run many turns
    concurrently. With `output_type` a turn ends only when the model's answer
    validates against it; `output_value(output)` returns it typed (`OutT`).
    """

    continues_partial_turns: ClassVar[bool] = True
    """It runs the continuations of the partial turns it hands on (`layer0.PartialTurn`)."""

    _unseen_stops: frozenset[str] = frozenset()
    """Stop tools a run's per-step sources have not offered yet (set on the run's own copy)."""
    _origin: NeuronTurn[Any] | None = None
    """The turn `with_output` made this one from (the first of a chain), which `override`
    may name: an override of it holds for this one too."""
    _forced_deps: object = _KEEP
    """`override(deps=...)`'s deps, used over a run's own (`_KEEP`: none given)."""

    # An async output function first: in one union with `Callable[..., T]` a type checker
    # cannot tell its result from its coroutine.
    @overload
    def __init__(
        self: NeuronTurn[_T],
        provider: Provider,
        *,
        tools: ToolRegistry | Iterable[ToolDyn | ToolSource] | None = None,
        hooks: HookRegistry | None = None,
        context: ContextStrategy | None = None,
        state: StateReader | None = None,
        config: NeuronTurnConfig | None = None,
        output_type: Callable[..., Awaitable[_T]],
        named_output_types: Mapping[str, OutputType[Any]] | None = None,
        deps: object = None,
    ) -> None: ...
    @overload
    def __init__(
        self,
        provider: Provider,
        *,
        tools: ToolRegistry | Iterable[ToolDyn | ToolSource] | None = None,
        hooks: HookRegistry | None = None,
        context: ContextStrategy | None = None,
        state: StateReader | None = None,
        config: NeuronTurnConfig | None = None,
        output_type: OutputType[OutT] | None = None,
        named_output_types: Mapping[str, OutputType[Any]] | None = None,
        deps: object = None,
    ) -> None: ...
    def __init__(
        self,
        provider: Provider,
        *,
        tools: ToolRegistry | Iterable[ToolDyn | ToolSource] | None = None,
        hooks: HookRegistry | None = None,
        context: ContextStrategy | None = None,
        state: StateReader | None = None,
        config: NeuronTurnConfig | None = None,
        output_type: OutputType[Any] | None = None,
        named_output_types: Mapping[str, OutputType[Any]] | None = None,
        deps: object = None,
    ) -> None:
        """Create a turn over `provider`; everything else is optional.

        `tools` is a `ToolRegistry` (with its middleware) or the tools themselves
        (`@tool` functions, `ExternalTool`s, MCP tools: any `ToolDyn`), which
        make a registry of their own; tool sources among them (`@tool_source`, an
        `MCPClient`) give each run's tools when it starts (`neuron_tool.source`).

        `output_type` is a pydantic model, dataclass, TypedDict, any type
        pydantic validates, an output function (the model calls it; what it
        returns is the answer), a `TextOutput`, a list of them for the model to
        choose between (`[Refund, Escalation]`, as their union; `str` for text),
        or an `OutputSpec` (`OutputSpec.json_schema(...)` for a raw JSON Schema).
        `named_output_types` are output types (anything `output_type` takes) a call
        may ask for by name instead (`run(..., output_type="refund")`, or an input's
        `{"neuron_turn": {"output_type": "refund"}}`), so code that sends inputs as
        JSON (an orchestrator, a worker's caller, the command line) can ask for a
        typed answer. `deps` is what tools asking for a `neuron_tool.RunContext` get as
        `context.deps` (a database handle, an HTTP client, the user), unless a
        call of `execute` passes its own.

        Raises:
            OutputTypeError: pydantic has no JSON Schema for `output_type` or one of
                `named_output_types` (named in the message), or a name is not a string.
            UnknownStopToolError: `config.stop_at_tools` names a tool the turn does not have.
            UnsupportedHostedToolError: `config.hosted_tools` holds one the provider does
                not run, or one a function tool's name shadows.
            UnsupportedThinkingError: `config.thinking` is set and the provider does not
                take it.
            UnsupportedStrictToolsError: a tool is strict and the provider has no strict mode,
                or the output asks for a strict final-answer tool (`OutputSpec(strict=True)`,
                `tool` mode) there.
            ToolRegistrationError: one of `tools` is not a tool, or two share a name.
            TypeError: `tools` is neither a registry nor a collection of tools.
        """
        self.provider = provider
        self.tools = _registry(tools)
        self.hooks = hooks if hooks is not None else HookRegistry()
        self.context = context
        self.state = state
        self.config = config if config is not None else NeuronTurnConfig()
        if not self.tools.sources:  # else checked on each run's tools, the sources' among them
            check_stop_tools(
                self.config.stop_at_tools, self.tools, where="NeuronTurnConfig.stop_at_tools"
            )
        check_hosted_tools(
            self.config.hosted_tools, provider=provider, function_tools=self.tools.names()
        )
        self._hosted_servers = approval_servers(self.config.hosted_tools)
        """The remote MCP servers granted, whose calls the provider may ask about."""
        check_provider_thinking(self.config.thinking, provider)
        check_provider_sampling(self.config.sampling, provider)
        check_strict_tools(self.tools.schemas(None), provider)
        self.output: OutputSpec[OutT] | None = (
            None if output_type is None else output_spec(output_type)
        )
        """The output type's spec (None: the turn ends in free text)."""
        if self.output is not None and self._output_mode(self.output) == "tool":
            check_strict_output(self.output, provider)
        self.named_outputs: Mapping[str, OutputSpec[Any]] = named_specs(named_output_types)
        """The output types a call may ask for by name (`named_output_types`, compiled)."""
        for spec in self.named_outputs.values():
            if self._output_mode(spec) == "tool":
                check_strict_output(spec, provider)
        self.meter = TokenMeter()
        """Learns each model's tokens per estimated token from its calls; shared by runs."""
        self.deps = deps
        """The dependencies tools get in their `RunContext` when a call passes none."""

    @overload
    @classmethod
    def from_plugins(
        cls,
        *,
        model: str,
        tools: Sequence[str | ToolDyn | ToolSource] = (),
        context: str | None = "sliding_window",
        context_options: Mapping[str, Any] | None = None,
        system: str = "",
        instructions: Instructions | None = None,
        hooks: Sequence[Hook] = (),
        state: StateReader | None = None,
        config: NeuronTurnConfig | None = None,
        provider_options: Mapping[str, Any] | None = None,
        plugins: PluginSource | None = None,
        output_type: str,
        named_output_types: Mapping[str, OutputType[Any]] | None = None,
        deps: object = None,
    ) -> NeuronTurn[Any]: ...
    @overload
    @classmethod
    def from_plugins(
        cls,
        *,
        model: str,
        tools: Sequence[str | ToolDyn | ToolSource] = (),
        context: str | None = "sliding_window",
        context_options: Mapping[str, Any] | None = None,
        system: str = "",
        instructions: Instructions | None = None,
        hooks: Sequence[Hook] = (),
        state: StateReader | None = None,
        config: NeuronTurnConfig | None = None,
        provider_options: Mapping[str, Any] | None = None,
        plugins: PluginSource | None = None,
        output_type: Callable[..., Awaitable[_T]],
        named_output_types: Mapping[str, OutputType[Any]] | None = None,
        deps: object = None,
    ) -> NeuronTurn[_T]: ...
    @overload
    @classmethod
    def from_plugins(
        cls,
        *,
        model: str,
        tools: Sequence[str | ToolDyn | ToolSource] = (),
        context: str | None = "sliding_window",
        context_options: Mapping[str, Any] | None = None,
        system: str = "",
        instructions: Instructions | None = None,
        hooks: Sequence[Hook] = (),
        state: StateReader | None = None,
        config: NeuronTurnConfig | None = None,
        provider_options: Mapping[str, Any] | None = None,
        plugins: PluginSource | None = None,
        output_type: OutputType[_T] | None = None,
        named_output_types: Mapping[str, OutputType[Any]] | None = None,
        deps: object = None,
    ) -> NeuronTurn[_T]: ...
    @classmethod
    def from_plugins(
        cls,
        *,
        model: str,
        tools: Sequence[str | ToolDyn | ToolSource] = (),
        context: str | None = "sliding_window",
        context_options: Mapping[str, Any] | None = None,
        system: str = "",
        instructions: Instructions | None = None,
        hooks: Sequence[Hook] = (),
        state: StateReader | None = None,
        config: NeuronTurnConfig | None = None,
        provider_options: Mapping[str, Any] | None = None,
        plugins: PluginSource | None = None,
        output_type: OutputType[Any] | str | None = None,
        named_output_types: Mapping[str, OutputType[Any]] | None = None,
        deps: object = None,
    ) -> NeuronTurn[Any]:
        """Build a turn from installed plugins: `model` is `"<provider>:<model>"`.

        Tools named by string come from plugins' `register_tools`; ToolDyn
        objects are used as they are. The approval policies plugins registered
        join `config.approval`: a call waits when any of them holds it. Hooks
        run in this order: every hook plugins registered (plugins in load
        order, each in its own order), then `hooks`. `context` names a context
        strategy (None: never compact). `plugins` defaults to the process-wide
        manager (`get_plugin_manager()`).
        `output_type` and `deps` are as for the constructor, and `output_type` may
        name an output type a plugin registered (`register_output_types`). Every
        output type plugins registered may be asked for by name per call, with
        `named_output_types` (yours over a plugin's of the same name; one two
        plugins registered is not, `neuron-turn plugins` shows the conflict).
        `instructions` goes into the config (`NeuronTurnConfig.instructions`).

        Raises:
            neuron_turn.PluginError: an unknown or conflicting provider, tool, strategy or
                output type.
            ProviderError: the provider's factory refused (e.g. a missing API key).
        """
        manager = default_plugin_source() if plugins is None else plugins
        # Before the provider is built: an unknown name leaves nothing to close.
        output = (
            manager.output_type_named(output_type) if isinstance(output_type, str) else output_type
        )
        hook_registry = manager.build_hook_registry()
        for hook in hooks:
            _add_numbered(hook_registry, hook)
        named = [t for t in tools if isinstance(t, str)]
        by_name = iter(manager.tools_by_name(named))
        registry = ToolRegistry(next(by_name) if isinstance(t, str) else t for t in tools)
        strategy = (
            None
            if context is None
            else manager.get_context_strategy(context, **(context_options or {}))
        )
        provider = manager.get_provider(model, **(provider_options or {}))
        base = config if config is not None else NeuronTurnConfig()
        resolved = replace(
            base,
            model=model.partition(":")[2],
            system=system or base.system,
            approval=ApprovalPolicy.combine(base.approval, manager.approval_policy()),
            guardrails=(*base.guardrails, *manager.registered_guardrails()),
            output_validators=(*base.output_validators, *manager.registered_output_validators()),
            instructions=instructions or base.instructions,
        )
        return NeuronTurn(
            provider,
            tools=registry,
            hooks=hook_registry,
            context=strategy,
            state=state,
            config=resolved,
            output_type=output,
            named_output_types={**manager.output_types(), **(named_output_types or {})},
            deps=deps,
        )

    def __repr__(self) -> str:
        output = "" if self.output is None else f", output={self.output.name!r}"
        sources = f", sources={list(self.tools.sources)!r}" if self.tools.sources else ""
        return (
            f"NeuronTurn(provider={self.provider!r}, tools={self.tools.names()!r}{sources}{output})"
        )

    def as_tool(
        self, name: str, description: str, *, pass_deps: bool = False, stream_events: bool = False
    ) -> FunctionTool:
        """This agent as a tool of another turn, as the OpenAI Agents SDK's `agent.as_tool()`.

        The tool takes one `input` (the question or task) and answers with this
        agent's answer; each call is a fresh conversation, charged to the calling
        turn (`run(charge_to=ctx)`). `pass_deps=True` gives it the calling run's
        deps. `stream_events=True` hands this agent's events to the calling turn's
        stream as the call's `ToolProgress` (`nested_event` reads them back), as the
        Agents SDK's `on_stream`. A run that ends unanswered fails the call, naming
        why (see `neuron_turn.loop.agent_tool`).

        Raises:
            ToolRegistrationError: `name` is no tool name, or `description` is empty.
        """
        return agent_tool(self, name, description, pass_deps=pass_deps, stream_events=stream_events)

    @contextmanager
    def override(
        self,
        *,
        provider: Provider | None = None,
        tools: ToolRegistry | Iterable[ToolDyn | ToolSource] | None = None,
        config: NeuronTurnConfig | None = None,
        deps: object = _KEEP,
    ) -> Iterator[None]:
        """Run this turn with another provider, tools, config or deps inside the block.

        For tests of code that holds the turn (a module's agent, a web handler):
        `with agent.override(provider=ScriptedProvider([...])):` and every run of
        `agent` inside, `execute`, `run`, `stream` and an orchestrator's dispatch,
        uses the test's model, as pydantic-ai's `agent.override(model=...)`. Only
        the task that entered the block and the tasks it starts see it, so tests
        running beside it are not touched; an inner block wins. What is not given
        is kept; the replacement is checked as the constructor checks a turn.

        Raises:
            ToolRegistrationError: as the constructor raises for `tools`.
            UnknownStopToolError: `config.stop_at_tools` names a tool the turn does not have.
            UnsupportedHostedToolError: as the constructor, for `provider` and `config`.
        """
        replacement: NeuronTurn[OutT] = self._remade(
            self.output,
            provider=provider,
            tools=tools,
            config=config,
            deps=self.deps if deps is _KEEP else deps,
        )
        replacement._forced_deps = deps
        with overriding(self, replacement):
            yield

    @overload
    def with_output(self, output_type: Callable[..., Awaitable[_T]]) -> NeuronTurn[_T]: ...
    @overload
    def with_output(self, output_type: OutputType[_T]) -> NeuronTurn[_T]: ...
    def with_output(self, output_type: OutputType[Any]) -> NeuronTurn[Any]:
        """Return this turn with another output type (same provider, tools, hooks, config).

        Cheap: a turn holds only configuration, so one per output type is fine. An
        `override` of this turn holds for the one returned too.
        """
        typed = self._remade(output_type, deps=self.deps)
        typed._origin = self._origin or self
        return typed

    def _remade(
        self,
        output_type: OutputType[Any] | None,
        *,
        deps: object,
        provider: Provider | None = None,
        tools: ToolRegistry | Iterable[ToolDyn | ToolSource] | None = None,
        config: NeuronTurnConfig | None = None,
    ) -> NeuronTurn[Any]:
        """A new turn like this one (checked as made), with what is given in its place."""
        return NeuronTurn(
            self.provider if provider is None else provider,
            tools=self.tools if tools is None else tools,
            hooks=self.hooks,
            context=self.context,
            state=self.state,
            config=self.config if config is None else config,
            output_type=output_type,
            named_output_types=self.named_outputs,
            deps=deps,
        )

    def output_value(self, output: TurnOutput) -> OutT:
        """Return the validated result of `output`, typed; without an output type, its text.

        Raises:
            OutputMissingError: the turn did not end with a validated result.
        """
        if self.output is None:
            return cast(OutT, output.message.as_text() or "")
        return output_value(output, self.output)

    async def execute(self, input: TurnInput, *, deps: object = None) -> TurnOutput:
        """Run one turn on `input` and return its output with every declared effect.

        `deps` replaces the turn's own `deps` for this call (None: keep them).

        Raises:
            ContextAssemblyError: the session's stored history does not parse.
            RetryableError: the provider or the state reader failed in a way a retry may fix.
            NonRetryableError: the provider refused the request (credentials, invalid
                request), or the state store raised a `StateError` reading the history.
            ModelError: the model's answer cannot be used (truncated, filtered, provider fault).
            neuron_turn.loop.approval.ApprovalError: the session awaits approval and the
                input carries no decisions, or its decisions do not fit the pending calls.
        """
        return await self._run(input, None, deps)

    def stream(
        self,
        input: TurnInput | str,
        *,
        deps: object = None,
        message_history: Sequence[ProviderMessage] | None = None,
        output_type: OutputType[Any] | str | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
    ) -> TurnStream:
        """Run one turn on `input`, yielding its events as they happen; `TurnDone` comes last.

        `input` may be a user's message alone (`turn.stream("Hi")`), as for `run`.

        The turn starts when iteration starts. Use it as `async for event in
        turn.stream(input)`, or as `async with turn.stream(input) as events:`
        to be sure it is cancelled on leaving the block. Breaking out,
        `aclose()`, or cancelling the task that iterates cancels the turn:
        the provider's stream is closed and running tools are cancelled. The
        `TurnDone` output equals what `execute` returns for the same input;
        errors are the ones `execute` raises, raised by the iteration after
        the events that came before them. `deps` is as for `execute`;
        `message_history` as for `run` (the stream's `all_messages()` goes on from it).
        `output_type` asks this turn for another output type, as for `run`: its
        `OutputDelta`s are of it, and `output_value(stream.output, <the type>)`
        reads the answer. `usage_limits`, `model_settings` and `tools` as for `run`.

        Raises:
            RunArgumentsError: `message_history` beside an input with a session, or
                `usage_limits` (`model_settings`) beside an input whose options hold them.
            MessageHistoryError: `message_history` holds what is no message of a history.
            OutputTypeError: `output_type` cannot be an output type, or the input's
                metadata asks for an output too.
        """
        given = TurnInput(message=input, trigger="user") if isinstance(input, str) else input
        spec, metadata = self._asked_output(output_type, given.metadata)
        metadata = with_model_settings(with_usage_limits(metadata, usage_limits), model_settings)
        if metadata is not given.metadata:  # a name, limits, settings: in the input's options
            given = given.model_copy(update={"metadata": metadata})
        history = given_history(given.session, message_history)
        transcript = Transcript()
        return TurnStream(
            lambda sink: self._run(given, sink, deps, spec, history, transcript, tools or ()),
            transcript,
        )

    def stream_sync(
        self,
        input: TurnInput | str,
        *,
        deps: object = None,
        message_history: Sequence[ProviderMessage] | None = None,
        output_type: OutputType[Any] | str | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
    ) -> SyncTurnStream:
        """`stream` from code with no event loop: its events read with a plain `for`.

        pydantic-ai's `run_stream_sync`: each event is waited for on the event loop
        `run_sync` keeps for this thread; leaving the loop early, `close()` or the
        end of a `with` block cancels the turn. The arguments are `stream`'s.

        Raises:
            RunSyncError: an event loop already runs here (async code): use `stream`.
            RunArgumentsError, MessageHistoryError, OutputTypeError: as `stream` raises them.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return SyncTurnStream(
                self.stream(
                    input,
                    deps=deps,
                    message_history=message_history,
                    output_type=output_type,
                    usage_limits=usage_limits,
                    model_settings=model_settings,
                    tools=tools,
                )
            )
        raise RunSyncError(
            "stream_sync was called where an event loop already runs; "
            "iterate turn.stream(...) with async for instead"
        )

    @overload
    async def run(
        self,
        message: str | Content | None = None,
        *,
        output_type: None = None,
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
        charge_to: RunContext[Any] | None = None,
    ) -> RunResult[OutT]: ...
    @overload
    async def run(
        self,
        message: str | Content | None = None,
        *,
        output_type: Callable[..., Awaitable[_T]],
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
        charge_to: RunContext[Any] | None = None,
    ) -> RunResult[_T]: ...
    @overload
    async def run(
        self,
        message: str | Content | None = None,
        *,
        output_type: str,
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
        charge_to: RunContext[Any] | None = None,
    ) -> RunResult[Any]: ...
    @overload
    async def run(
        self,
        message: str | Content | None = None,
        *,
        output_type: OutputType[_T],
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
        charge_to: RunContext[Any] | None = None,
    ) -> RunResult[_T]: ...
    async def run(
        self,
        message: str | Content | None = None,
        *,
        output_type: OutputType[Any] | str | None = None,
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
        charge_to: RunContext[Any] | None = None,
    ) -> RunResult[Any]:
        """Run one turn on a user's `message`; `result.output` is its answer, typed.

        `execute(TurnInput(message=message, trigger="user", session=...))` with the
        answer read as the turn's output type, as pydantic-ai's `agent.run` gives it.
        `output_type` asks this run for another (pydantic-ai's `run(output_type=...)`):
        anything the constructor's `output_type` takes, or the name of one of the
        turn's `named_output_types`. A name is kept across an approval pause, as an
        input's options are; a type is not (a resume, often in another process, cannot
        carry a Python type): give a name to a run that may pause.
        `session` reads that session's history from the turn's state; the messages
        the run adds are declared as effects (`result.turn_output.effects`), which an
        orchestrator writes (`LocalOrchestrator.dispatch`), as for `execute`. Errors
        are `execute`'s. `message_history` is a conversation kept in code instead (no
        store: `result.all_messages()` of the run before, or `messages_from_json`),
        pydantic-ai's `message_history=`; the result's `all_messages()` goes on from it.

        `usage_limits` bound this run's tool calls and tokens (pydantic-ai's
        `run(usage_limits=...)`; `config=TurnConfig(max_turns=, max_cost=)` the rest),
        over the turn's own `NeuronTurnConfig.usage_limits`, as an input's options do.
        `model_settings` change how the model is asked for this run (temperature,
        `max_tokens`, thinking, sampling, parallel tool calls; pydantic-ai's
        `run(model_settings=...)`), over the turn's own; kept across an approval pause.
        `tools` are this run's own tools (functions, tool sources, an `MCPClient`) beside
        the turn's (pydantic-ai's `run(toolsets=...)`), checked as the turn's are; a name
        the turn has is refused. A resume of a run that paused on one of them needs them
        given again (a Python function does not travel in JSON).

        `decisions` resume a run paused for approval (pydantic-ai's
        `deferred_tool_results`): no message, and the paused run's `session` or its
        `message_history` (the paused result's `all_messages()`); as `resume_input`.

        `charge_to` is the `RunContext` of a tool running this turn as its own agent
        (pydantic-ai's `usage=ctx.usage`): the run's tokens and cost are charged to
        that tool's turn (`RunContext.charge`), so its `max_cost` and token limits
        cover both; a run that fails or is cancelled is charged what it had used.

        Raises:
            OutputTypeError: `output_type` cannot be an output type, or `metadata` asks
                for an output too.
            RunArgumentsError: the arguments make no one run (a message and decisions,
                a session and a message history, neither a message nor decisions).
            MessageHistoryError: `message_history` holds what is no message of a history.
        """
        spec, metadata = self._asked_output(output_type, metadata)
        metadata = with_model_settings(with_usage_limits(metadata, usage_limits), model_settings)
        input, history = run_input(
            message,
            session=session,
            message_history=message_history,
            decisions=decisions,
            config=config,
            metadata=metadata,
        )
        transcript = Transcript()
        try:
            output = await self._run(input, None, deps, spec, history, transcript, tools or ())
        except BaseException:
            used = transcript.failed_usage
            if charge_to is not None and used is not None:
                # Without a session no partial turn is kept: its spending is charged all the same.
                charge_to.charge(
                    used.cost, input_tokens=used.input_tokens, output_tokens=used.output_tokens
                )
            raise
        if charge_to is not None:
            _charge(charge_to, output)
        if output_type is None:
            read: Callable[[TurnOutput], Any] = self.output_value
        else:
            # A name with `output_text` beside it (in `metadata`) answered in a choice with text.
            answered = spec or read_call_options(metadata, self.named_outputs).output
            assert answered is not None  # a name the turn does not know failed the run
            read = partial(output_value, output_type=answered)
        return RunResult(output, read, transcript.history, transcript.new)

    @overload
    def run_sync(
        self,
        message: str | Content | None = None,
        *,
        output_type: None = None,
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
    ) -> RunResult[OutT]: ...
    @overload
    def run_sync(
        self,
        message: str | Content | None = None,
        *,
        output_type: Callable[..., Awaitable[_T]],
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
    ) -> RunResult[_T]: ...
    @overload
    def run_sync(
        self,
        message: str | Content | None = None,
        *,
        output_type: str,
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
    ) -> RunResult[Any]: ...
    @overload
    def run_sync(
        self,
        message: str | Content | None = None,
        *,
        output_type: OutputType[_T],
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
    ) -> RunResult[_T]: ...
    def run_sync(
        self,
        message: str | Content | None = None,
        *,
        output_type: OutputType[Any] | str | None = None,
        session: SessionId | None = None,
        message_history: Sequence[ProviderMessage] | None = None,
        decisions: Sequence[Decision] | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        tools: Sequence[ToolDyn | ToolSource] | None = None,
        deps: object = None,
        config: TurnConfig | None = None,
        metadata: JsonValue = None,
    ) -> RunResult[Any]:
        """`run` from code with no event loop (a script, a notebook cell without await).

        Runs on an event loop of this thread's own, kept open between calls (not
        `asyncio.run`, which closes it: a provider's pooled connections belong to the
        loop that opened them), as pydantic-ai's `run_sync` does.

        Raises:
            RunSyncError: an event loop already runs here (async code): await `run`.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run_blocking(
                self.run(
                    message,
                    output_type=output_type,
                    session=session,
                    message_history=message_history,
                    decisions=decisions,
                    usage_limits=usage_limits,
                    model_settings=model_settings,
                    tools=tools,
                    deps=deps,
                    config=config,
                    metadata=metadata,
                )
            )
        raise RunSyncError(
            "run_sync was called where an event loop already runs; await turn.run(...) instead"
        )

    def _overridden(self) -> NeuronTurn[OutT] | None:
        """The turn an `override` block runs instead of this one here (None: this one)."""
        replacement = overridden(self)
        if replacement is not None:
            return cast(NeuronTurn[OutT], replacement)
        origin = self._origin
        if origin is None:
            return None
        of_origin = overridden(origin)
        if of_origin is None:
            return None
        # Made by `with_output` from a turn overridden here: the override, in this one's type.
        typed = copy.copy(cast(NeuronTurn[OutT], of_origin))
        typed.output, typed.named_outputs = self.output, self.named_outputs
        return typed

    def _asked_output(
        self, output_type: OutputType[Any] | str | None, metadata: JsonValue
    ) -> tuple[OutputSpec[Any] | None, JsonValue]:
        """A run's own output type: a spec to answer in, or `metadata` naming one.

        Raises:
            OutputTypeError: `output_type` cannot be an output type, or `metadata` asks
                for an output too.
        """
        if output_type is None:
            return None, metadata
        if isinstance(output_type, str):
            return None, with_output_type(metadata, output_type)
        with_output_type(metadata, None)  # refuses metadata that asks for one too
        return output_spec(output_type), metadata

    async def _run(
        self,
        input: TurnInput,
        sink: Callable[[TurnEvent], None] | None,
        deps: object,
        output: OutputSpec[Any] | None = None,
        history: Sequence[ProviderMessage] | None = None,
        transcript: Transcript | None = None,
        tools: Sequence[ToolDyn | ToolSource] = (),
    ) -> TurnOutput:
        """Run the turn on `input`: `execute`, `stream` and `run` come here.

        `run` alone passes `output` (its own output type), `history` (its
        `message_history`, read instead of the session's), `transcript` (where
        the run leaves the messages `RunResult.all_messages` gives) and `tools` (its
        own, beside the turn's). Inside a `capture_run_messages` block the first run
        leaves its messages there too.
        """
        capture = claim_capture()
        if capture is None:
            return await self._run_input(input, sink, deps, output, history, transcript, tools)
        kept = transcript if transcript is not None else Transcript()
        if history is not None:
            kept.history = history  # there even when the run fails before its loop
        try:
            result = await self._run_input(input, sink, deps, output, history, kept, tools)
        except BaseException:
            capture.fill(kept, ended_well=False)
            raise
        capture.fill(kept, ended_well=True)
        return result

    async def _run_input(
        self,
        input: TurnInput,
        sink: Callable[[TurnEvent], None] | None,
        deps: object,
        output: OutputSpec[Any] | None,
        history: Sequence[ProviderMessage] | None,
        transcript: Transcript | None,
        tools: Sequence[ToolDyn | ToolSource],
    ) -> TurnOutput:
        """`_run`'s work (see it)."""
        replacement = self._overridden()
        if replacement is not None:  # inside `override`: the block's turn runs instead
            forced = replacement._forced_deps
            return await replacement._run_input(
                input, sink, deps if forced is _KEEP else forced, output, history, transcript, tools
            )
        if _resumes(input.metadata):
            input = await self._with_paused_options(input)
        options = read_call_options(input.metadata, self.named_outputs)
        if output is not None:  # `run(output_type=...)`: metadata asking for one was refused
            options = replace(options, output=output)
        turn = self._offering(options.external_tools) if options.external_tools else self
        if tools:
            turn = turn._given_tools(tools)
        if turn.tools.sources:
            turn = await turn._sourced(input, deps)
        if options.stop_at_tools:
            unseen = check_stop_tools(options.stop_at_tools, turn.tools, where=INPUT_STOP_TOOLS)
            if unseen:  # only with per-step sources, so `turn` is this run's own copy
                turn._unseen_stops = turn._unseen_stops | unseen
        if options.output is not None and self._output_mode(options.output) == "tool":
            check_strict_output(options.output, self.provider)
        if options.model_settings is not None:
            options.model_settings.check_provider(self.provider)
        settings = self.config.resolve(input.config, options)
        watches = start_watches(
            lambda: TurnStart(self.config.agent, settings.model, self.provider, input)
        )
        if watches is None:
            return await turn._run_turn(
                input, options, settings, sink, sink, deps, history, transcript
            )
        try:
            result = await turn._run_turn(
                input,
                options,
                settings,
                sink,
                watches if sink is None else both(sink, watches),
                deps,
                history,
                transcript,
            )
        except BaseException as exc:
            watches.end(None, exc)
            raise
        watches.end(result, None)
        return result

    async def _run_turn(
        self,
        input: TurnInput,
        options: CallOptions,
        settings: ResolvedConfig,
        sink: Callable[[TurnEvent], None] | None,
        events: Callable[[TurnEvent], None] | None,
        deps: object,
        given: Sequence[ProviderMessage] | None,
        transcript: Transcript | None,
    ) -> TurnOutput:
        """Run the turn; `sink` is a stream's consumer, `events` where every event goes.

        `options` are the input's own (`read_call_options`), read once; `given` and
        `transcript` are `_run`'s `history` and `transcript`.
        """
        decisions, metadata = split_decisions(input.metadata)
        if decisions is not None:
            input = input.model_copy(update={"metadata": metadata})
        continuing = continues(input.metadata)
        if continuing and decisions is not None:
            raise ContinuationError(
                "an input carries approval decisions or continues a turn, not both"
            )
        counts = carried_counts(input.metadata) if continuing else None
        output = self._output_round(options)
        history = await self._read_history(input.session) if given is None else given
        standing: dict[str, StandingDecision] = {}
        if self.config.approval is not None and input.session and self.state is not None:
            # Only a turn with an approval policy reads them: the usual turn pays nothing.
            standing = await read_standing(self.state, input.session)
        if continuing:
            check_continuation(input, history, has_state=self.state is not None)
            if counts is None and self.state is not None and input.session is not None:
                counts = await read_kept_counts(self.state, input.session, history)
            # Its first part called a tool, so a tool choice that forces one call is spent.
            output.tool_called = True
        pending = pending_in(history)
        resumed, sessions = (
            await self._resumed_calls(history, decisions, input, settings)
            if pending or decisions is not None
            else ([], {})  # the usual turn: a new message on a session that waits on nothing
        )
        opening = (
            []
            if resumed or continuing
            else [
                ProviderMessage(
                    "user",
                    _carried(parts_from_content(input.message)),
                    pinned=_pinned(input.metadata),
                )
            ]
        )
        run = RunState(
            settings,
            input.session,
            [*history, *opening],
            history_length=len(history),
            new_from=len(history),
            sink=events,
            streamed=sink is not None,
            deps=self.deps if deps is None else deps,
            input=input,
            call_ids=call_ids(history),
            standing=standing,
            hosted_tools=offered_hosted_tools(self.config.hosted_tools, settings.allowed_tools),
        )
        if decisions:
            self._stand_by(run, pending, decisions)
        if self.config.guardrails and opening:
            # Only a new message is checked: a resume or a continuation was, when it came.
            run.input_guardrails = _of_kind(self.config.guardrails, InputGuardrail)
        if counts is not None:
            run.carry(counts)
            output.failures = counts.output_failures
        recorder = _recorder(run, input.metadata)
        take = current_checkpoint()
        if take is not None:
            run.checkpoint = self._checkpointer(take, run, input, output, recorder)
        deadline = None if settings.max_duration is None else settings.max_duration / 1000
        try:
            async with asyncio.timeout(deadline) as timeout:
                if self.config.instructions is not None:
                    await self._instruct(run, input)
                reason = await self._loop(run, input, (resumed, sessions), output, continuing)
        except TimeoutError:
            if not timeout.expired():
                raise
            reason = "timeout"
            if run.sink is not None:
                run.emit(LimitReached(reason))
        except TurnError as exc:
            _failed(transcript, run, history)  # first: a partial turn drops a refused answer
            exc.partial = self._offered(exc, run, input, output, recorder)
            raise
        except asyncio.CancelledError as exc:
            # Stopped by its caller: what its tools did happened all the same.
            _failed(transcript, run, history)
            exc.partial = self._offered(exc, run, input, output, recorder)  # type: ignore[attr-defined]
            raise
        except Exception:
            _failed(transcript, run, history)
            raise
        if reason != AWAITING_APPROVAL:
            run.close_unanswered()
        if reason == AWAITING_APPROVAL:
            _keep_options(run, input)
        result = run.output(reason)
        if transcript is not None:
            transcript.history, transcript.new = history, run.new_messages()
        message = None if reason == GUARDRAIL_TRIPPED else output.message()
        if message is not None:
            result = result.model_copy(update={"message": message})
        if run.sink is not None:
            for effect in result.effects[run.effects_emitted :]:
                run.sink(EffectDeclared(effect))
        result = _with_timeline(result, recorder, run.turn_id)
        if sink is not None:
            sink(TurnDone(result))
        return result

    def _checkpointer(
        self,
        take: Checkpoint,
        run: RunState,
        input: TurnInput,
        answers: OutputRound,
        recorder: TimelineRecorder | None,
    ) -> Callable[[], None]:
        """What hands `take` the run's partial turn after a round of tool calls (`checkpoint`)."""

        def checkpoint() -> None:
            if not self._continuable(run):
                return
            try:
                partial = self._part_so_far(run, input, answers, recorder)
            except ContinuationError:
                # Metadata that is not an object takes no continuation mark: nothing to
                # go on from, so a lost run is run again whole, as with no checkpoints.
                return
            take(partial)

        return checkpoint

    def _offered(
        self,
        exc: BaseException,
        run: RunState,
        input: TurnInput,
        answers: OutputRound,
        recorder: TimelineRecorder | None,
    ) -> PartialTurn | None:
        """The partial turn `exc` offers (even over one another turn's error carried).

        One that cannot be built never hides `exc`: why is noted on it.
        """
        try:
            return self._partial(run, input, answers, recorder)
        except Exception as unbuilt:
            exc.add_note(f"no partial turn: {type(unbuilt).__name__}: {unbuilt}")
            return None

    def _partial(
        self,
        run: RunState,
        input: TurnInput,
        answers: OutputRound,
        recorder: TimelineRecorder | None,
    ) -> PartialTurn | None:
        """What the failed or cancelled run did, for a retry to continue from.

        See `continuation`.

        None when a retry of the whole input repeats no tool, or when no continuation
        could read what the partial output appends.

        Raises:
            ContinuationError: the input's metadata is not an object, so no continuation
                can be marked (the caller notes why on the turn's error).
        """
        if not self._continuable(run):
            return None
        run.close_unanswered()
        run.drop_refused_answer()
        return self._part_so_far(run, input, answers, recorder, keep_counts=True)

    def _continuable(self, run: RunState) -> bool:
        """Whether a continuation could go on from `run`: its tools ran, a session keeps them."""
        return (
            bool(run.records or run.cut_off) and run.session is not None and self.state is not None
        )

    def _part_so_far(
        self,
        run: RunState,
        input: TurnInput,
        answers: OutputRound,
        recorder: TimelineRecorder | None,
        *,
        keep_counts: bool = False,
    ) -> PartialTurn:
        """`run` as it stands, as a partial turn and the continuation that goes on from it.

        Its messages must end on the user's side, every call answered (`_partial`
        sees to that; a round of tool calls just ended leaves them so). With
        `keep_counts` (a run that ended there, not a checkpoint, whose continuation
        goes on in the same runner), the output also keeps the counts in the session.

        Raises:
            ContinuationError: the input's metadata is not an object.
        """
        counts = run.counts(answers.failures)
        usage = run.settings.usage_limits
        left = None if usage is None else usage.left(run.tool_calls, run.tokens_in, run.tokens_out)
        continuation = continuation_input(input, counts, usage_left=left)
        output = run.output(INTERRUPTED)
        if keep_counts:
            output = _keeping_counts(output, run, counts)
        output = _with_timeline(output, recorder, run.turn_id)
        config = continuation.config or TurnConfig()
        limits = _remaining_limits(run)
        return PartialTurn(
            output, continuation.model_copy(update={"config": config.model_copy(update=limits)})
        )

    async def _instruct(self, run: RunState, input: TurnInput) -> None:
        """Put this run's dynamic instructions into its system prompt."""
        instructions = self.config.instructions
        assert instructions is not None
        text = await render_instructions(instructions, self._context(run, input))
        addendum = None if input.config is None else input.config.system_addendum
        system = "\n".join(part for part in (self.config.system, text, addendum) if part)
        run.settings = replace(run.settings, system=system or None)

    def _output_round(self, options: CallOptions) -> OutputRound:
        """The call's output type and tool choice: the input's options over the config."""
        config = self.config
        spec = options.output if options.output is not None else self.output
        choice = options.tool_choice or config.parsed_tool_choice
        return OutputRound(
            spec,
            self._output_mode(spec),
            retries=config.output_retries,
            choice=choice,
            reset_choice=config.reset_tool_choice,
            infer_strict=infers_strict_tools(self.provider),
            graceful=config.end_strategy == "graceful",
        )

    def _output_mode(self, spec: OutputSpec[Any] | None) -> OutputMode:
        """The mode `spec` is asked for in: its own, the config's, else the provider's first.

        Raises:
            OutputTypeError: a spec taking plain text asked for natively (by the config).
        """
        if spec is None:
            # Never read without an output type; asking the provider is a protocol check.
            return "prompted"
        if spec.mode is not None:
            return spec.mode
        if self.config.output_mode is not None:
            if spec.allows_text and self.config.output_mode == "native":
                raise OutputTypeError(
                    f"the output {spec.name!r} takes plain text, which native output (JSON "
                    "only) cannot give, and NeuronTurnConfig.output_mode is native: ask for "
                    "this output in tool or prompted mode (OutputSpec(..., mode=...))"
                )
            return self.config.output_mode
        provider = self.provider
        if isinstance(provider, SupportsOutputModes) and provider.output_modes:
            # A spec taking text skips native output, whose answer is JSON only.
            usable = [m for m in provider.output_modes if m != "native" or not spec.allows_text]
            return usable[0] if usable else "prompted"
        return "prompted"

    async def check_resume(self, input: TurnInput) -> None:
        """Check that resume `input` (`resume_input`) fits its session's pause; run nothing.

        So a caller (an orchestrator resuming a delegated agent, a form
        collecting decisions) learns before anything runs whether the resume
        would be refused.

        Raises:
            neuron_turn.loop.approval.ApprovalError: as `execute` would raise it for
                `input`; `MalformedDecisionsError` when it carries no decisions.
        """
        replacement = self._overridden()
        if replacement is not None:  # inside `override`: checked as the block's turn runs it
            return await replacement.check_resume(input)
        decisions, metadata = split_decisions(input.metadata)
        if decisions is None:
            raise MalformedDecisionsError(
                f"the input carries no decisions (metadata[{DECISIONS_KEY!r}]); it resumes nothing"
            )
        input = input.model_copy(update={"metadata": metadata})
        input = await self._with_paused_options(input)
        options = read_call_options(input.metadata, self.named_outputs)
        turn = self._offering(options.external_tools) if options.external_tools else self
        if turn.tools.sources:
            turn = await turn._sourced(input, None)
        settings = self.config.resolve(input.config)
        history = await self._read_history(input.session)
        await turn._resumed_calls(history, decisions, input, settings)

    async def _sourced(self, input: TurnInput, deps: object) -> NeuronTurn[OutT]:
        """This turn with its tool sources' tools for the run `input` starts.

        The sources are asked once, before anything runs (`neuron_tool.source`);
        the checks a turn's own tools get when it is made are made on theirs.

        Raises:
            ToolSourceError: a source failed, or gave a tool whose name is taken.
            UnknownStopToolError: `NeuronTurnConfig.stop_at_tools` names a tool the run lacks.
            UnsupportedHostedToolError: a source's tool shadows a hosted tool.
            UnsupportedStrictToolsError: a source's tool is strict and the provider has no
                strict mode (checked with the run's other tools, before the first call).
        """
        context = RunContext(
            deps=self.deps if deps is None else deps, session=input.session, input=input
        )
        registry = await self.tools.for_run(context)
        unseen = check_stop_tools(
            self.config.stop_at_tools, registry, where="NeuronTurnConfig.stop_at_tools"
        )
        check_hosted_tools(
            self.config.hosted_tools, provider=self.provider, function_tools=registry.names()
        )
        sourced = copy.copy(self)
        sourced.tools = registry
        sourced._unseen_stops = unseen
        return sourced

    def _given_tools(self, tools: Sequence[ToolDyn | ToolSource]) -> NeuronTurn[OutT]:
        """This turn offering a run's own `tools` (`run(tools=...)`) beside its own.

        Checked as a turn's own tools are when it is made.

        Raises:
            ToolRegistrationError: one is not a tool, or its name is taken (by the
                turn's tools, the loop's own, or another of `tools`).
            UnsupportedStrictToolsError: one is strict and the provider has no strict mode.
            UnsupportedHostedToolError: one shadows a hosted tool of the turn.
        """
        given = ToolRegistry(tools)
        for name in given.names():
            if name in _LOOP_TOOL_NAMES:
                raise ToolRegistrationError(name, "a tool of the loop's own has this name")
            if name in self.tools:
                raise ToolRegistrationError(
                    name, "the turn has a tool of this name; a run's tools add to its own"
                )
        check_strict_tools(given.schemas(None), self.provider)
        registry = self.tools.with_tools(given)
        registry.sources = (*registry.sources, *given.sources)
        check_hosted_tools(
            self.config.hosted_tools, provider=self.provider, function_tools=registry.names()
        )
        offering = copy.copy(self)
        offering.tools = registry
        return offering

    def _offering(self, tools: Sequence[ExternalTool]) -> NeuronTurn[OutT]:
        """This turn offering `tools` beside its own, for one call (`with_external_tools`).

        Raises:
            NonRetryableError: a tool's name is taken (by the turn's tools or the
                loop's) or its schema is not a JSON Schema; the same input fails again.
        """
        reserved = sorted(t.name for t in tools if t.name in _LOOP_TOOL_NAMES)
        if reserved:
            raise NonRetryableError(
                f"{INPUT_EXTERNAL_TOOLS}: {', '.join(map(repr, reserved))} name(s) a tool of "
                "the loop's own"
            )
        try:
            registry = self.tools.with_tools(tools)
        except ToolRegistrationError as exc:
            raise NonRetryableError(f"{INPUT_EXTERNAL_TOOLS}: {exc}") from None
        offering = copy.copy(self)
        offering.tools = registry
        return offering

    async def _resumed_calls(
        self,
        history: Sequence[ProviderMessage],
        decisions: Sequence[Decision] | None,
        input: TurnInput,
        settings: ResolvedConfig,
    ) -> tuple[list[ToolUsePart], dict[str, SessionId]]:
        """Return the decided calls a resume runs first, checked (see `_resumed`).

        The calls are those the session's `history` leaves without a result;
        with them, the sessions their `delegate` calls run in. The decisions a
        delegated agent's calls get are checked by the answerer that will
        resume it, when it can (`ChecksDecisions`).
        """
        session = input.session
        pending = pending_in(history)
        sessions = _held_sessions(session, history) if self.config.effect_tools else {}
        delegated, answers = await self._delegated(pending, sessions)
        resumed = _resumed(
            pending,
            decisions,
            input,
            delegated,
            lambda: self._tool_schemas(settings, session, self._memory(settings, session)),
            self.tools.external_names,
            self._hosted_names,
        )
        if answers:
            resumed = [
                AnsweredCall(c.id, c.name, c.input, answers[c.id]) if c.id in answers else c
                for c in resumed
            ]
        waiting = [c for c in resumed if isinstance(c, ResumedDelegation) and delegated[c.id]]
        # An answerer is a callable; one that checks decisions also has the method.
        answerer: object = current_answerer() if waiting else None
        if isinstance(answerer, ChecksDecisions) and session is not None:
            for call in waiting:
                await _check_delegated(answerer, call, settings, session, sessions[call.id])
        return resumed, sessions

    async def _delegated(
        self, pending: Sequence[ToolUsePart], sessions: Mapping[str, SessionId]
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        """The pending `delegate` calls held for their agents: the ids those wait on.

        And the answers of those that went on without this turn. A call whose
        agent has a history (in its session of `sessions`) ran and was held for
        it (a call held by this turn's own policy has not run). Its agent may
        since have gone on without this turn (its session resumed on its own):
        it waits on no call then, and its last answer answers the call.
        """
        waiting: dict[str, list[str]] = {}
        answers: dict[str, str] = {}
        for call in pending:
            if call.id not in sessions:
                continue
            theirs = await self._read_history(sessions[call.id])
            if theirs:
                waiting[call.id] = [c.id for c in pending_in(theirs)]
                if not waiting[call.id]:
                    answers[call.id] = _last_answer(theirs) or _NO_ANSWER
        return waiting, answers

    async def _with_paused_options(self, input: TurnInput) -> TurnInput:
        """A resume with the options its pause kept (`paused_options`), when it has a session."""
        if self.state is None or input.session is None:
            return input
        pending = pending_in(await self._read_history(input.session))
        return await with_paused_options(input, self.state, pending)

    async def _read_history(self, session: str | None) -> list[ProviderMessage]:
        if session is None or self.state is None:
            return []
        return await read_history(self.state, session)

    def _stand_by(
        self, run: RunState, pending: Sequence[ToolUsePart], decisions: Sequence[Decision]
    ) -> None:
        """Keep the decisions given `always` for the turn's own calls as the session's standing.

        A delegated agent's are kept by its own turn, in its session. Without a
        session (a resume from a message history in code) they hold for the rest of
        this run only: there is no store to keep them in.
        """
        names = {call.id: call.name for call in pending}
        given = {
            names[d.id]: StandingDecision(decision=d.decision, reason=d.reason)
            for d in decisions
            if d.always and d.id in names
        }
        if not given or self.config.approval is None:
            return
        run.standing = {**run.standing, **given}
        if run.session is not None:
            run.effects.append(standing_effect(run.session, dict(run.standing)))

    async def _loop(
        self,
        run: RunState,
        input: TurnInput,
        resume: tuple[Sequence[ToolUsePart], Mapping[str, SessionId]],
        output: OutputRound,
        continuing: bool,
    ) -> ExitReason:
        memory = self._memory(run.settings, run.session)
        tools = self._tool_schemas(run.settings, run.session, memory)
        # Read once: the no-prepare loop pays one local test a step, nothing more.
        stepped = bool(self.tools.step_sources)
        prepares = self.tools.any_prepares or stepped
        schemas, allowed = tools, run.settings.allowed_tools
        if prepares:
            # The first step's, asked before anything runs: a resume's decided calls are
            # checked against it too, as the first model call's tools.
            tools = await self._prepared(run, schemas, allowed)
        check_strict_tools(tools, self.provider)
        output.check_choice(tools)
        config = self.config
        rounds = ToolRound(
            self.tools,
            self.hooks,
            run,
            config.parallel_tools,
            config.effect_tools,
            memory,
            resumable=self.state is not None,
        )
        keeper = self._keeper(run, tools)
        try:
            # The stored history and the new message may already be over the limit.
            await keeper.step()
            resumed, sessions = resume
            if resumed:
                # The decided calls of a paused turn: no model call before them.
                await rounds.execute(resumed, sessions)
                _pause_on_delegated(run, rounds)
                if run.checkpoint is not None:
                    run.checkpoint()
                self._check_round(run)
                if run.settings.stop_at_tools:
                    await self._stop_at_tools(run, input, output, resumed)
            if continuing:
                # Its limits are what the part before it left, which may be nothing.
                self._check_limits(run)
            while True:
                await self._iterate(run, input, tools, rounds, output, keeper)
                if prepares:
                    if stepped:
                        schemas = await self._restocked(run, rounds, memory, allowed)
                    tools = await self._next_step(run, schemas, allowed, output, keeper)
        except _Exit as stop:
            reason = stop.reason
        except TurnHalted as halted:
            reason = ObserverHalt(reason=halted.reason)
        if self._unseen_stops:
            run.effects.append(unoffered_stop_tools(self._unseen_stops))
        if reason == "complete" and self.config.guardrails:
            reason = await self._check_answer(run, input, output)
        if reason == "budget_exhausted":
            await keeper.budget_halted()
        if run.sink is not None:
            if isinstance(reason, ObserverHalt):
                run.emit(HookHalted(reason.reason))
            elif reason in _LIMITS:
                run.emit(LimitReached(reason))
        return reason

    async def _iterate(
        self,
        run: RunState,
        input: TurnInput,
        tools: list[ToolSchema],
        rounds: ToolRound,
        output: OutputRound,
        keeper: ContextKeeper,
    ) -> None:
        hooks = self.hooks
        if hooks.has_hooks(HookPoint.PRE_INFERENCE):
            _halt_on(await hooks.dispatch(run.hook_context(HookPoint.PRE_INFERENCE)))  # 1
        request = self._request(run, input, tools, output)  # 2
        if run.sink is not None:
            run.emit(ModelCallStart(run.turns_used + 1, request))
        guardrails = run.input_guardrails
        if guardrails:
            run.input_guardrails = ()  # the first call only
            response = await self._screened_call(request, run, input, output, guardrails)
        else:
            response = await self._complete(request, run, output)  # 3
        guarded = well_formed_content(guard_tool_calls(response.content, run.call_ids))
        if guarded is not response.content:
            # A refused call, a call given an id of its own or repaired text took a part's place.
            response = replace(response, content=guarded)
        run.turns_used += 1
        run.last_content = response.content
        run.messages.append(ProviderMessage("assistant", response.content))
        try:
            if hooks.has_hooks(HookPoint.POST_INFERENCE):
                # Built only for a hook that will read it: it costs a validation of every part.
                output_content = content_from_parts(response.content)
                context = run.hook_context(HookPoint.POST_INFERENCE, model_output=output_content)
                _halt_on(await hooks.dispatch(context))  # 4
        finally:
            # The call was made and paid for: count it even when the hook halts.
            run.account(response)  # 5
            if run.sink is not None:
                run.emit(
                    ModelCallDone(
                        run.turns_used,
                        response.model,
                        response.stop_reason,
                        response.usage,
                        response.cost,
                        response,
                        tuple(response.hosted_calls),
                    )
                )
            if keeper.after_call(request, response):
                await keeper.report_call(response)
        step = output.judge(response, run.messages)  # 6
        if (
            (self.config.output_validators or output.call is not None)
            and isinstance(step, Finish)
            and step.reason == "complete"
        ):
            step = await self._answered(run, input, output, step)
        if not isinstance(step, Calls):
            if step.beside:
                await self._run_beside(run, rounds, step)
            elif step.closing:
                run.messages.append(ProviderMessage("user", step.closing))
            raise _Exit(step.reason)
        if step.calls:
            if run.settings.usage_limits is not None:
                await _count_calls(run, rounds, step)
            await self._run_or_hold(run, rounds, step.calls)  # 7
            output.ran_tools()
        merge_pending(run.messages, step)
        if step.calls:
            if run.checkpoint is not None:
                run.checkpoint()  # what a runner that loses this run goes on from
            self._check_round(run)
            if run.settings.stop_at_tools:
                await self._stop_at_tools(run, input, output, step.calls)
        self._check_limits(run)  # 8
        if hooks.has_hooks(HookPoint.EXIT_CHECK):
            _halt_on(await hooks.dispatch(run.hook_context(HookPoint.EXIT_CHECK)))  # 9
        if keeper.settle():  # 10
            await keeper.act()

    async def _screened_call(
        self,
        request: ProviderRequest,
        run: RunState,
        input: TurnInput,
        output: OutputRound,
        guardrails: Sequence[InputGuardrail],
    ) -> ProviderResponse:
        """Step 3 beside the input guardrails: nothing acts on the answer until they pass.

        Raises:
            _Exit: a guardrail tripped (`GUARDRAIL_TRIPPED`); an answer already paid for is
                counted, and withheld (`_withhold`).
        """
        screen = InputScreen(guardrails, self._context(run, input), input.message)
        response, tripped = await screen.screened(self._complete(request, run, output), run)
        if tripped is None:
            assert response is not None
            return response
        if response is not None:
            run.turns_used += 1
            run.account(response)
        _withhold(run, tripped, len(run.messages))
        raise _Exit(GUARDRAIL_TRIPPED)

    async def _answered(
        self, run: RunState, input: TurnInput, output: OutputRound, step: Finish
    ) -> Step:
        """Step 6 for a final answer: the output function run on it, then the validators.

        An output function sending the answer back (`ModelRetry`) counts as a
        failed answer; what it returns is the answer the validators see.
        """
        call = output.call
        if call is not None:
            try:
                output.called(await call.result(self._context(run, input)))
            except ModelRetry as retry:
                return output.send_back(retry.hint, run.messages)
        if self.config.output_validators:
            return await self._validated(run, input, output, step)
        return step

    async def _validated(
        self, run: RunState, input: TurnInput, output: OutputRound, step: Finish
    ) -> Step:
        """Step 6 for a final answer: the output validators' verdict on it.

        The session keeps the model's words; the turn's output holds what the
        validators returned.
        """
        answer = output.answer(run.last_content)
        context = self._context(run, input)
        verdict = await validated(self.config.output_validators, context, answer, output.spec)
        if isinstance(verdict, SentBack):
            return output.send_back(verdict.hint, run.messages)
        if verdict != answer:
            if output.spec is None:
                run.last_content = [TextPart(verdict)]
            else:
                output.replace(verdict)
        return step

    async def _stop_at_tools(
        self, run: RunState, input: TurnInput, output: OutputRound, calls: Sequence[ToolUsePart]
    ) -> None:
        """After a round of calls: end the turn on a stop tool's result, as its final answer.

        The answer passes a `TextOutput`'s function (text it takes), then the output
        validators (either sending it back lets the model read why and go on) and,
        once the turn ends, the output guardrails.

        Raises:
            _Exit: a stop tool's call succeeded (`complete`), or a typed turn's stop tool
                answered what is not its output type (`output_invalid`, its log saying why).
        """
        stopped = stop_result(run.messages[-1], calls, run.settings.stop_at_tools)
        if stopped is None:
            return
        name, text = stopped
        run.last_content = [TextPart(text)]
        try:
            output.tool_answer(text)
        except OutputValidationError as exc:
            assert output.spec is not None
            run.effects.append(
                LogEffect(
                    level=LogLevel.WARN,
                    message=f"stop tool {name!r} answered what is not {output.spec.name}: {exc}",
                    data={"stop_tool": name},
                )
            )
            raise _Exit(OUTPUT_INVALID) from None
        done = Finish("complete")
        finishing = self.config.output_validators or output.call is not None
        step = await self._answered(run, input, output, done) if finishing else done
        if isinstance(step, Finish):
            raise _Exit(step.reason)

    async def _check_answer(
        self, run: RunState, input: TurnInput, output: OutputRound
    ) -> ExitReason:
        """Run the output guardrails on the final answer; the turn's exit after them."""
        checks = _of_kind(self.config.guardrails, OutputGuardrail)
        if not checks:
            return "complete"
        context = self._context(run, input)
        answer = output.answer(run.last_content)
        tripped = await first_trip(
            [(guardrail.name, guardrail.check(context, answer)) for guardrail in checks], "output"
        )
        if tripped is None:
            return "complete"
        at = _answer_at(run)
        if output.answer_calls and len(run.messages) == at + 2:
            at = _keep_beside(run, at, output.answer_calls)
        _withhold(run, tripped, at)
        return GUARDRAIL_TRIPPED

    def _context(self, run: RunState, input: TurnInput) -> RunContext[Any]:
        """The run context a guardrail, an output validator or dynamic instructions get."""
        return RunContext(
            deps=run.deps,
            session=run.session,
            input=input,
            deadline=run.deadline,
            step=run.turns_used,
            usage=run.usage(),
        )

    async def _run_or_hold(
        self, run: RunState, rounds: ToolRound, calls: Sequence[ToolUsePart]
    ) -> None:
        held: list[ToolUsePart] = []
        if self.config.approval is not None or run.standing or self._waits:
            # Screened only where there is something to screen: one coroutine less a round.
            calls, held = await self._screened(run, rounds, calls)
        if not held:
            await rounds.execute(calls)
            _pause_on_delegated(run, rounds)
            return
        # Declared first so that a hook halting a free call still reports what waits.
        announced = len(run.effects)
        external, hosted = self.tools.external_names, self._hosted_names
        run.effects.append(pending_effect(held, (), external, hosted))
        free = [c for c in calls if c not in held]
        if free:
            await rounds.execute(free)
        delegated = rounds.take_held()
        if delegated:
            run.effects[announced] = pending_effect(held, delegated, external, hosted)
        raise _Exit(AWAITING_APPROVAL)

    async def _run_beside(self, run: RunState, rounds: ToolRound, step: Finish) -> None:
        """End gracefully (`end_strategy`): run the calls that came beside the final answer.

        The turn has its answer and waits for nothing: a call that would wait (for
        approval, for the caller, a hosted call asking) is answered unrun saying so,
        as is a handoff (it would end the turn on another agent's answer), and calls
        past the tool-call limit are answered unrun with the limit's log.
        Only a delegated agent pausing in the round pauses the turn, as in any round.
        """
        calls, held = await self._screened(run, rounds, step.beside)
        calls = [_unrun(c, _WAITS_BESIDE) if c in held else c for c in calls]
        if self.config.effect_tools:
            # A handoff ends the turn on another agent's answer: not beside this one.
            calls = [_unrun(c, _HANDOFF_BESIDE) if c.name == _HANDOFF_TOOL else c for c in calls]
        if run.settings.usage_limits is not None:
            calls, crossed = _within_call_limit(run, calls)
            if crossed is not None:
                run.effects.append(crossed.log())
        await rounds.execute(calls)
        merge_pending(run.messages, Calls(calls, pending=step.closing, order=step.order))
        if run.checkpoint is not None:
            run.checkpoint()  # the tools ran: a runner that loses this run must not run them again
        _pause_on_delegated(run, rounds)

    async def _screened(
        self, run: RunState, rounds: ToolRound, calls: Sequence[ToolUsePart]
    ) -> tuple[Sequence[ToolUsePart], list[ToolUsePart]]:
        """A round's calls as they will run, and those of them that wait.

        Standing decisions are applied, external and hosted calls screened.
        """
        policy = self.config.approval
        external = self.tools.external_names
        standing = run.standing
        if standing:
            calls = [_as_standing(c, standing) for c in calls]
        if external:
            allows = run.settings.allows
            calls = [screened_external(c, self.tools, allows) for c in calls]
            if self.hooks.has_hooks(HookPoint.PRE_TOOL_USE):
                calls = await rounds.hand_out(
                    calls, lambda c: screened_external(c, self.tools, allows)
                )
        hosted = self._hosted_names
        if hosted:
            servers = self._hosted_servers
            calls = [screened_hosted(c, servers) for c in calls]
        # Nothing in the turn runs an external or a hosted call: each always waits.
        waits = external | hosted if hosted else external
        held = [] if policy is None and not waits else _held(calls, policy, standing, waits)
        return calls, held

    @property
    def _waits(self) -> bool:
        """Whether some call of this turn always waits (an external or a hosted one)."""
        return bool(self.tools.external_names) or bool(self._hosted_servers)

    @property
    def _hosted_names(self) -> frozenset[str]:
        """The call names of hosted calls the provider may ask about (empty: none granted)."""
        return _HOSTED_CALLS if self._hosted_servers else frozenset()

    def _memory(self, settings: ResolvedConfig, session: str | None) -> MemoryReader | None:
        """The memory tools' reader, when the turn offers them (it has a state reader)."""
        config = self.config
        if not config.memory_tools or self.state is None:
            return None
        return MemoryReader(self.state, settings.effect_policy, session, config.memory_limits)

    def _tool_schemas(
        self, settings: ResolvedConfig, session: str | None, memory: MemoryReader | None
    ) -> list[ToolSchema]:
        own = self.tools.schemas(settings.allowed_tools)
        if not self.config.effect_tools and memory is None:
            return own
        # Granted loop tools only; their names stay reserved even when not granted.
        reserved: frozenset[str] = frozenset()
        loop: list[ToolSchema] = []
        if self.config.effect_tools:
            reserved = EFFECT_TOOL_NAMES
            loop.extend(effect_tool_schemas(settings.effect_policy, session))
        if memory is not None:
            reserved |= MEMORY_TOOL_NAMES
            loop.extend(memory_tool_schemas(memory.policy, session, memory.limits))
        return [s for s in own if s.name not in reserved] + [
            s for s in loop if settings.allows(s.name)
        ]

    async def _restocked(
        self,
        run: RunState,
        rounds: ToolRound,
        memory: MemoryReader | None,
        allowed: frozenset[str] | None,
    ) -> list[ToolSchema]:
        """The schemas of the next model call's tools, the per-step sources asked again.

        The calls of the answer just handled ran against the tools its model call
        was shown; from here on the run's registry is the one the sources give now.
        `self` is this run's own copy (a turn with sources runs as one: `_sourced`).

        Raises:
            ToolStepSourceError: a source failed or gave a tool that cannot be offered.
            UnsupportedHostedToolError: a source's tool shadows a hosted tool.
        """
        try:
            registry = await self.tools.for_step(run.step_context())
        except ToolSourceError as exc:
            raise ToolStepSourceError(exc.source, exc.reason) from exc
        # No stop-tool check here: one a step's sources leave out is not offered that step.
        if self._unseen_stops:
            self._unseen_stops = self._unseen_stops - set(registry.names())
        check_hosted_tools(
            self.config.hosted_tools, provider=self.provider, function_tools=registry.names()
        )
        self.tools = rounds.tools = registry
        return self._tool_schemas(replace(run.settings, allowed_tools=allowed), run.session, memory)

    async def _next_step(
        self,
        run: RunState,
        schemas: list[ToolSchema],
        allowed: frozenset[str] | None,
        output: OutputRound,
        keeper: ContextKeeper,
    ) -> list[ToolSchema]:
        """The tools of the next model call, as the `prepare`s offer them for its step.

        Raises:
            ToolPrepareError: a `prepare` failed; the turn fails before the call.
            UnsupportedStrictToolsError: a `prepare` made a tool strict over a provider
                without strict mode.
            NonRetryableError: they left out the tool a tool choice still forces.
        """
        tools = await self._prepared(run, schemas, allowed)
        check_strict_tools(tools, self.provider)
        # A forced named tool left out would make the request one no model API takes.
        output.check_choice(tools, in_force=True)
        # The keeper only estimates the context's size from them until a call reports it;
        # this step's tools make that closer, and the meter's memo keeps unchanged ones free.
        keeper.tools = tools
        return tools

    async def _prepared(
        self, run: RunState, schemas: list[ToolSchema], allowed: frozenset[str] | None
    ) -> list[ToolSchema]:
        """`schemas` as the tools' `prepare`s offer them for the run's next model call.

        Asked before every model call of the turn (`neuron_tool.prepare`), each
        `prepare` seeing the run's context at that step (`RunContext.step`,
        `usage`). A tool a `prepare` leaves out is not allowed for the calls of
        that step's response, so a call to it is refused as any call to a tool
        the turn does not allow; the next step starts again from the turn's own
        `allowed` tools (None: all), so a tool left out once may be offered later.
        """
        prepared, hidden = await self.tools.prepare(schemas, run.tool_context)
        names = allowed
        if hidden:
            names = (
                allowed
                if allowed is not None
                else frozenset((*self.tools.names(), *EFFECT_TOOL_NAMES, *MEMORY_TOOL_NAMES))
            ) - hidden
        if names != run.settings.allowed_tools:
            run.settings = replace(run.settings, allowed_tools=names)
        return prepared

    def _request(
        self, run: RunState, input: TurnInput, tools: list[ToolSchema], output: OutputRound
    ) -> ProviderRequest:
        extra = dict(self.config.extra)
        metadata = _trace_metadata(input.metadata)
        if metadata is not None:
            extra["metadata"] = metadata
        offered, choice = output.offer(tools)
        model = run.settings.model_settings
        if self.config.step_model_settings is not None:
            model = self._step_settings(run, input, model)
        return ProviderRequest(
            model=run.settings.model,
            messages=run.request_messages(),
            tools=offered,
            max_tokens=model.max_tokens,
            temperature=model.temperature,
            system=output.system(run.settings.system),
            extra=extra,
            tool_choice=choice,
            parallel_tool_calls=model.parallel_tool_calls if offered else None,
            output=output.provider_output(),
            prompted_output=output.prompted_output,
            hosted_tools=run.hosted_tools,
            thinking=model.thinking,
            sampling=model.sampling,
        )

    def _step_settings(
        self, run: RunState, input: TurnInput, model: ModelSettings
    ) -> ModelSettings:
        """The model settings of this step: `step_model_settings`' over the run's.

        Raises:
            StepModelSettingsError: the function raised, or returned what is no
                `ModelSettings` (None keeps the run's).
            UnsupportedThinkingError, UnsupportedSamplingError: it asks for a setting
                the provider does not take.
        """
        decide = self.config.step_model_settings
        assert decide is not None
        try:
            own = decide(self._context(run, input))
        except Exception as exc:
            raise StepModelSettingsError(
                f"step_model_settings raised {type(exc).__name__}: {exc}"
            ) from exc
        if own is None:
            return model
        if not isinstance(own, ModelSettings):
            raise StepModelSettingsError(
                f"step_model_settings returned {type(own).__name__}, not ModelSettings or None"
            )
        own.check_provider(self.provider)
        return own.over(model)

    async def _complete(
        self, request: ProviderRequest, run: RunState, output: OutputRound
    ) -> ProviderResponse:
        check_model_request(self.provider)
        try:
            if not run.streamed or run.sink is None:
                return _counted(await self.provider.complete(request))
            sink = run.sink
            if output.spec is not None:
                sink = OutputFollower(output.spec, output.mode, sink, output.final_tools())
            return _counted(await self._streamed(request, StreamedCallIds(sink, run.call_ids)))
        except ProviderError as exc:
            raise _turn_error(exc) from exc
        except Exception as exc:
            raise ModelError(f"the provider failed: {type(exc).__name__}: {exc}") from exc

    async def _streamed(
        self, request: ProviderRequest, sink: Callable[[TurnEvent], None]
    ) -> ProviderResponse:
        """Step 3 for a streamed turn: pass the provider's deltas on as they arrive."""
        provider = streaming(self.provider)
        if provider is None:
            response = await self.provider.complete(request)
            for delta in deltas_of(response):
                sink(_well_formed_event(delta))
            return response
        final: ProviderResponse | None = None
        events = provider.stream(request)
        try:
            async for event in events:
                if isinstance(event, ProviderResponse):
                    final = event
                elif final is None:
                    sink(_well_formed_event(event))
                else:
                    raise ProviderResponseError(
                        "the provider's stream went on after its final response"
                    )
        finally:
            # Closed now, not when collected: a cancelled turn must not leave the
            # provider's connection open.
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        if final is None:
            raise ProviderResponseError("the provider's stream ended without a final response")
        return final

    def _check_round(self, run: RunState) -> None:
        if any(isinstance(effect, HandoffEffect) for effect in run.effects):
            raise _Exit(_HANDOFF)
        if run.failures_in_a_row >= self.config.max_consecutive_failures:
            raise _Exit("circuit_breaker")
        if run.same_calls_in_a_row > self.config.max_identical_calls:
            raise _Exit(_STUCK)

    def _check_limits(self, run: RunState) -> None:
        settings = run.settings
        reason = limit_reached(
            turns_used=run.turns_used,
            max_turns=settings.max_turns,
            cost=run.cost,
            max_cost=settings.max_cost,
            elapsed_ms=run.elapsed_ms(),
            max_duration=settings.max_duration,
        )
        if reason is not None:
            raise _Exit(reason)
        usage = settings.usage_limits
        crossed = None if usage is None else usage.tokens_crossed(run.tokens_in, run.tokens_out)
        if crossed is not None:
            run.effects.append(crossed.log())
            raise _Exit("budget_exhausted")

    def _keeper(self, run: RunState, tools: list[ToolSchema]) -> ContextKeeper:
        return ContextKeeper(
            run=run,
            strategy=self.context,
            meter=self.meter,
            hooks=self.hooks,
            provider=self.provider,
            config=self.config,
            limit=context_limit(
                self.config,
                self.provider,
                run.settings.model,
                run.settings.model_settings.max_tokens,
            ),
            system=run.settings.system,
            tools=tools,
        )


def _of_kind(guardrails: Sequence[object], kind: type[_G]) -> tuple[_G, ...]:
    return tuple(guardrail for guardrail in guardrails if isinstance(guardrail, kind))


async def _count_calls(run: RunState, rounds: ToolRound, step: Calls) -> None:
    """Count the calls `step` asks for against the `tool_calls` limit.

    Raises:
        _Exit: they would go past it (`budget_exhausted`); each was answered unrun, so
            the history stays whole, and the limit's log declared.
    """
    unrun, crossed = _within_call_limit(run, step.calls)
    if crossed is None:
        return
    await rounds.execute(unrun)
    merge_pending(run.messages, step)
    run.effects.append(crossed.log())
    raise _Exit("budget_exhausted")


def _within_call_limit(
    run: RunState, calls: Sequence[ToolUsePart]
) -> tuple[list[ToolUsePart], LimitCrossed | None]:
    """Count `calls` against the `tool_calls` limit; past it, each answered unrun instead.

    The calls that run are counted only when all may; the limit crossed is returned.
    """
    asked = sum(not isinstance(call, UNRUN) for call in calls)
    assert run.settings.usage_limits is not None
    crossed = run.settings.usage_limits.calls_crossed(run.tool_calls, asked)
    if crossed is None:
        run.tool_calls += asked
        return list(calls), None
    refusal = f"Not run: {crossed.message()}."
    return [_unrun(c, refusal) for c in calls], crossed


def _unrun(call: ToolUsePart, refusal: str) -> ToolUsePart:
    """`call` answered unrun with `refusal` (one answered unrun already kept as it is)."""
    return call if isinstance(call, UNRUN) else RefusedCall(call.id, call.name, call.input, refusal)


def _answer_at(run: RunState) -> int:
    """Where the final answer starts in `run.messages`: its last message from the model."""
    messages = run.messages
    last = range(len(messages) - 1, run.new_from - 1, -1)
    return next((i for i in last if messages[i].role == "assistant"), len(messages))


def _keep_beside(run: RunState, at: int, answer_calls: frozenset[str]) -> int:
    """Take the answer at `at` out of its round, keeping the calls that ran beside it.

    Ending gracefully (`end_strategy`), the message holding the answer also asked for
    calls that then ran (a message sent, a file written): withholding the answer must
    not take them and their results out of the history, or the session would not say
    they ran. Returns where the answer now starts: past them.
    """
    messages = run.messages
    asked, answered = messages[at], messages[at + 1]
    calls = [p for p in asked.content if isinstance(p, ToolUsePart) and p.id not in answer_calls]
    results = [
        p
        for p in answered.content
        if isinstance(p, ToolResultPart) and p.tool_use_id not in answer_calls
    ]
    messages[at:] = [ProviderMessage("assistant", calls), ProviderMessage("user", results)]
    return len(messages)


def _withhold(run: RunState, tripped: Tripped, answer_at: int) -> None:
    """Put the stopping guardrail's message in place of `run`'s answer, and declare its log.

    The answer starts at `answer_at` (the end of `run.messages`: no answer yet).
    """
    said = [TextPart(tripped.message())]
    del run.messages[answer_at:]
    run.messages.append(ProviderMessage("assistant", said))
    run.last_content = said
    run.effects.append(tripped.log())


def _keeping_counts(output: TurnOutput, run: RunState, counts: CarriedCounts) -> TurnOutput:
    """`output` also keeping `counts` in the run's session, for a continuation built later."""
    assert run.session is not None  # `_continuable`
    kept = kept_counts_effect(run.session, counts, run.new_messages())
    if kept is None:
        return output
    return output.model_copy(update={"effects": [kept, *output.effects]})


def _keep_options(run: RunState, input: TurnInput) -> None:
    """Have `run` (a pause) keep the input's options for its resume, in the session.

    Declared with the run's own effects, so the history append still comes last.
    """
    if run.session is None:
        return
    usage = run.settings.usage_limits
    left = None if usage is None else usage.left(run.tool_calls, run.tokens_in, run.tokens_out)
    kept = paused_options_effect(run.session, input.metadata, left, pending_in(run.messages))
    if kept is not None:
        run.effects.append(kept)


def _charge(context: RunContext[Any], output: TurnOutput) -> None:
    """Charge what `output`'s turn used to the turn `context` belongs to."""
    used = output.metadata
    context.charge(used.cost, input_tokens=used.tokens_in, output_tokens=used.tokens_out)


def _failed(
    transcript: Transcript | None, run: RunState, history: Sequence[ProviderMessage]
) -> None:
    """Leave in `transcript` what `run`, failing, had used and said (after `history`)."""
    if transcript is not None:
        transcript.failed_usage = run.usage()
        transcript.history, transcript.new = history, run.new_messages()


def _resumes(metadata: JsonValue) -> bool:
    return isinstance(metadata, dict) and DECISIONS_KEY in metadata


def _carried(parts: Sequence[ContentPart]) -> Sequence[ContentPart]:
    """The caller's message, refused when it holds text no model API or store can carry.

    Raises:
        NonRetryableError: a lone UTF-16 surrogate in the message.
    """
    if well_formed_content(parts) is parts:
        return parts
    raise NonRetryableError(
        "the input message holds a lone UTF-16 surrogate, which no model API or store can "
        "carry (bytes that are not UTF-8, decoded with surrogateescape, become these); "
        "decode the text strictly, or replace what does not decode"
    )


def _well_formed_event(event: TurnEvent) -> TurnEvent:
    """A streamed event as the consumer gets it: its text without lone surrogates."""
    if isinstance(event, TextDelta | ThinkingDelta | ToolCallStart | ToolCallDelta):
        return well_formed_delta(event)
    return event


def _add_numbered(registry: HookRegistry, hook: Hook) -> None:
    """Add `hook`; if its default name is taken, as `<name>#2`, `#3`, ….

    Why: `from_plugins` takes hooks without names, so two of one class (two
    `ToolPolicyHook`s) were refused with advice to pass `name=`, which it cannot.
    """
    try:
        registry.add(hook)
    except DuplicateHookError as taken:
        number = 2
        while True:
            try:
                registry.add(hook, name=f"{taken.name}#{number}")
                return
            except DuplicateHookError:
                number += 1


_MAX_CALL_TOKENS: Final = 10**12
"""More tokens than any model takes or writes in one call: a count past it is no count."""


def _counted(response: ProviderResponse) -> ProviderResponse:
    """`response`, when its token counts are counts a turn can add up.

    Why: a provider's (or a server's) count of 1e30 or -5 passed into the turn's
    totals, and the turn failed at its end with a bare ValidationError, losing
    what its tools did; refused here, before anything runs on the answer.

    Raises:
        ProviderResponseError: a count is no whole number from 0 to 10**12.
    """
    usage = response.usage
    given, made = usage.input_tokens, usage.output_tokens
    # Spelled out, not looped: this runs on every model call.
    if (
        type(given) is int
        and type(made) is int
        and 0 <= given <= _MAX_CALL_TOKENS
        and 0 <= made <= _MAX_CALL_TOKENS
    ):
        read, written = usage.cache_read_tokens, usage.cache_creation_tokens
        if (read is None or _is_count(read)) and (written is None or _is_count(written)):
            return response
    for count in (given, made, usage.cache_read_tokens, usage.cache_creation_tokens):
        if count is not None and not _is_count(count):
            raise ProviderResponseError(
                f"the answer's usage counts {count!r} tokens, which is no count of tokens "
                f"(a whole number from 0 to {_MAX_CALL_TOKENS:,})"
            )
    return response


def _is_count(value: object) -> bool:
    return type(value) is int and 0 <= value <= _MAX_CALL_TOKENS


def _halt_on(action: HookAction) -> None:
    """End the turn if the hooks' `action` is a halt (steps 1, 4 and 9)."""
    if isinstance(action, Halt):
        raise _Exit(ObserverHalt(reason=action.reason))


def _with_timeline(
    output: TurnOutput, recorder: TimelineRecorder | None, turn_id: str
) -> TurnOutput:
    """`output` with the recorded timeline as its last effect, when the input asked for it."""
    if recorder is None:
        return output
    timeline = recorder.timeline(turn_id).effect()
    return output.model_copy(update={"effects": [*output.effects, timeline]})


def _remaining_limits(run: RunState) -> dict[str, object]:
    """The limits a continuation of `run` has: what the failed part left of each."""
    settings = run.settings
    limits: dict[str, object] = {"max_turns": max(settings.max_turns - run.turns_used, 0)}
    if settings.max_cost is not None:
        left = settings.max_cost - run.cost
        limits["max_cost"] = left if left.amount > 0 else usd()
    if settings.max_duration is not None:
        limits["max_duration"] = max(settings.max_duration - run.elapsed_ms(), 0)
    return limits


def _recorder(run: RunState, metadata: JsonValue) -> TimelineRecorder | None:
    """Add a timeline recorder to the run's sink when the input asks for its timeline."""
    if not isinstance(metadata, dict):
        return None
    options = metadata.get(CALL_OPTIONS_KEY)
    if not (isinstance(options, dict) and options.get(RECORD_OPTION) is True):
        return None
    recorder = TimelineRecorder(run.started)
    run.sink = recorder if run.sink is None else both(run.sink, recorder)
    return recorder


def _pinned(metadata: JsonValue) -> bool:
    """Whether the input asks to pin its message: `metadata["neuron_turn"]["pin"]` is true."""
    if not isinstance(metadata, dict):
        return False
    options = metadata.get("neuron_turn")
    return isinstance(options, dict) and options.get("pin") is True


def _trace_metadata(metadata: JsonValue) -> JsonValue:
    """The input's metadata as providers get it: without the loop's own call options."""
    if isinstance(metadata, dict) and CALL_OPTIONS_KEY in metadata:
        rest = {key: value for key, value in metadata.items() if key != CALL_OPTIONS_KEY}
        return rest or None
    return metadata


_NO_ANSWER: Final = "The agent went on without this turn and answered with no text."


def _last_answer(history: Sequence[ProviderMessage]) -> str:
    """The text of the last answer in `history` (an agent's, once it went on)."""
    for message in reversed(history):
        if message.role == "assistant":
            text = "".join(p.text for p in message.content if isinstance(p, TextPart))
            if text:
                return text
    return ""


def _held(
    calls: Sequence[ToolUsePart],
    policy: ApprovalPolicy | None,
    standing: Mapping[str, StandingDecision],
    external: Collection[str],
) -> list[ToolUsePart]:
    """The calls of `calls` the turn pauses on: its external tools', and those `policy` holds.

    No standing approval lets an external call run: nothing here can run it.
    """
    held: list[ToolUsePart] = []
    for call in calls:
        if isinstance(call, RefusedCall):
            continue
        name = call.name
        if name in external or (
            policy is not None
            and policy.requires(name, call.input)
            and name not in standing  # a standing approval (a denial was refused already)
        ):
            held.append(call)
    return held


def _as_standing(call: ToolUsePart, standing: Mapping[str, StandingDecision]) -> ToolUsePart:
    """`call`, answered unrun when a standing decision denies its tool."""
    decided = standing.get(call.name)
    if decided is None or decided.decision != "deny" or isinstance(call, RefusedCall):
        return call
    return standing_refusal(call, decided)


def _pause_on_delegated(run: RunState, rounds: ToolRound) -> None:
    """End the turn paused if a delegated agent of the round waits on calls.

    Raises:
        _Exit: with `AWAITING_APPROVAL`, the pending calls declared.
    """
    delegated = rounds.take_held()
    if delegated:
        run.effects.append(pending_effect((), delegated))
        raise _Exit(AWAITING_APPROVAL)


async def _check_delegated(
    answerer: ChecksDecisions,
    call: ResumedDelegation,
    settings: ResolvedConfig,
    session: SessionId,
    own: SessionId,
) -> None:
    """Have `answerer` check the decisions resumed delegation `call` hands its agent.

    One whose input no longer declares a delegation is left to fail as the call's result.

    Raises:
        neuron_turn.loop.approval.ApprovalError: they do not fit the agent's pause.
    """
    try:
        effect, _ = declare_effect(
            call.name, call.input, policy=settings.effect_policy, session=session
        )
    except EffectToolError:
        return
    resumed = answered_form(effect, call, own)
    if not isinstance(resumed, DelegateEffect):
        return
    try:
        await answerer.check_decisions(resumed)
    except ApprovalError as exc:
        # Its agent names its calls without the prefix they carry here.
        raise type(exc)(
            f"agent {resumed.agent!r}, which call {call.id!r} waits on, refused the decisions "
            f"for its calls (named {call.id}/ID here): {exc}"
        ) from exc


def _held_sessions(
    session: SessionId | None, history: Sequence[ProviderMessage]
) -> dict[str, SessionId]:
    """The sessions of the `delegate` calls of `history`'s last assistant message, by call id."""
    if session is None:
        return {}
    index = last_assistant(history)
    return {} if index is None else delegation_sessions(session, index, history[index].content)


def _resumed(
    pending: Sequence[ToolUsePart],
    decisions: Sequence[Decision] | None,
    input: TurnInput,
    delegated: Mapping[str, Sequence[str]],
    schemas: Callable[[], Sequence[ToolSchema]],
    external: Collection[str],
    hosted: Collection[str],
) -> list[ToolUsePart]:
    """Return the decided calls a resume runs first (empty for an ordinary input).

    `delegated` maps each pending `delegate` call whose agent waits on calls to
    their ids; `schemas` returns the turn's tool schemas, which an edited input
    must match; `external` names the external tools, which no approval can run,
    and `hosted` the hosted calls, which the provider runs once approved.

    Raises:
        ApprovalError: decisions without a paused session or not fitting its pending
            calls, a resume carrying a message, or an ordinary input on a paused session.
    """
    session = input.session
    if decisions is None:
        if pending:
            # An agent that went on waits on no call of its own: its delegate call, then.
            ids = ", ".join(pending_ids(pending, delegated) or [c.id for c in pending])
            if session is None:
                raise AwaitingApprovalError(
                    f"the message history ends with call(s) {ids} that have no result: "
                    "resume them with run(decisions=[...], message_history=...) before a "
                    "new message, or leave that last assistant message out"
                )
            raise AwaitingApprovalError(
                f"session {session!r} is awaiting approval of call(s) {ids}; "
                "resume it with decisions (neuron_turn.resume_input) before a new message"
            )
        return []
    if session is None and not pending:
        # Without a session only a message history given to `run` holds paused calls.
        raise NotAwaitingApprovalError(
            "decisions came for a turn without a session, or with a message history "
            "that waits on no call"
        )
    if not is_empty(input.message):
        raise MalformedDecisionsError("a resume carries decisions, not a message; send it empty")
    by_id = match_decisions(pending, decisions, session, delegated)
    edited = any(d.decision == "approve" and d.input is not None for d in decisions)
    offered = {schema.name: schema for schema in schemas()} if edited else {}
    return [_decided(call, by_id[call.id], offered, external, hosted) for call in pending]


def _decided(
    call: ToolUsePart,
    decision: Decision | tuple[Decision, ...],
    schemas: Mapping[str, ToolSchema],
    external: Collection[str],
    hosted: Collection[str],
) -> ToolUsePart:
    if isinstance(decision, tuple):
        return ResumedDelegation(call.id, call.name, call.input, decision)
    if call.name in hosted and (approved := decided_hosted(call, decision)) is not None:
        return approved
    if decision.decision == "deny":
        refusal = f"Denied by a person: {decision.reason or 'no reason given'}"
        return RefusedCall(call.id, call.name, call.input, refusal)
    if decision.decision == "answer":
        return answered_call(call, decision.output, decision.is_error)
    if call.name in external:
        raise ExternalCallApprovedError(
            f"call {call.id!r} is of external tool {call.name!r}, which nothing in the turn "
            "can run: answer it with its output (Decision.answer) or deny it"
        )
    if decision.input is None:
        return call
    check_edited(call, decision.input, schemas.get(call.name))
    return ToolUsePart(call.id, call.name, decision.input)


def _turn_error(exc: ProviderError) -> Exception:
    """Map a provider error to the layer0 error an orchestrator decides retries by."""
    message = str(exc)
    if exc.retryable:
        return RetryableError(message, retry_after=exc.retry_after)
    if isinstance(exc, ProviderAuthenticationError | InvalidRequestError):
        return NonRetryableError(message)
    return ModelError(message)
