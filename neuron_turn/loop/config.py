"""`NeuronTurnConfig`: a turn's defaults, and how a call's `TurnConfig` overrides them."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeVar, get_args

from moneyed import Money
from pydantic import JsonValue

from layer0 import EffectPolicy, SessionConflict, TurnConfig

from ._output_round import CallOptions
from .approval import ApprovalPolicy
from .guardrails import InputGuardrail, OutputGuardrail
from .hosted_tools import HostedTool, as_hosted_tools
from .instructions import Instructions
from .limits import UsageLimits
from .memory_tools import MemoryLimits
from .model_settings import ModelSettings, StepModelSettings
from .output import EndStrategy, OutputMode
from .output_validators import OutputValidator
from .sampling import Sampling
from .thinking import Thinking
from .tool_choice import ToolChoice

__all__ = ["NeuronTurnConfig", "ResolvedConfig"]

_T = TypeVar("_T")
_DEFAULT_MAX_TURNS: Final = 10
_DEFAULT_MAX_TOKENS: Final = 4096
_NO_MODEL_SETTINGS: Final = ModelSettings()


@dataclass(frozen=True, kw_only=True, slots=True)
class NeuronTurnConfig:
    """Defaults of one `NeuronTurn`; each call's `TurnConfig` may override some of them."""

    system: str = ""
    """The base system prompt."""
    instructions: Instructions | None = None
    """Dynamic instructions: a function of the run context (sync or async) whose text
    follows `system` in each run's system prompt (see `neuron_turn.loop.instructions`)."""
    guardrails: Sequence[InputGuardrail | OutputGuardrail] = ()
    """Checks of the user's message (run beside the first model call) and of the final
    answer that stop the turn when they trip (see `neuron_turn.loop.guardrails`)."""
    output_validators: Sequence[OutputValidator] = ()
    """Checks of the final answer that may send it back to the model with a hint, in
    order, before the output guardrails (see `neuron_turn.loop.output_validators`)."""
    stop_at_tools: Collection[str] = ()
    """Tools whose call, once it succeeds, ends the turn with its result as the final
    answer and no model call after it, as the OpenAI Agents SDK's `StopAtTools`."""
    model: str = ""
    """The model asked for when the call does not name one."""
    max_turns: int = _DEFAULT_MAX_TURNS
    """Most model calls per turn."""
    max_tokens: int | None = _DEFAULT_MAX_TOKENS
    """Output token cap per model call (None: the provider's default)."""
    temperature: float | None = None
    max_cost: Money | None = None
    """Most USD one turn may spend."""
    max_duration: int | None = None
    """Wall-clock limit per turn in milliseconds; also a hard deadline."""
    usage_limits: UsageLimits | None = None
    """Most tool calls and tokens per turn (see `UsageLimits`); an input's own, in its
    metadata, win limit by limit."""
    parallel_tools: bool = True
    """Run the tool calls of one model response concurrently (results stay in order);
    a response calling a tool made `sequential` runs its calls one after another."""
    max_consecutive_failures: int = 5
    """This many failed tool calls in a row end the turn with `circuit_breaker`."""
    max_identical_calls: int = 3
    """The same tool called with the same input more often than this in a row ends the
    turn with `{"custom": "stuck_detected"}`."""
    effect_tools: bool = True
    """Offer the effect tools (write_memory, delete_memory, delegate, handoff, signal),
    as far as `effect_policy` grants them."""
    effect_policy: EffectPolicy = field(default_factory=EffectPolicy)
    """What the model may do through effect tools (default: its own session's memory
    only); a call's `TurnConfig.effect_policy` replaces it."""
    memory_tools: bool = True
    """Offer the memory read tools (read_memory, list_memory, search_memory) when the
    turn has a state reader, as far as `effect_policy` grants reading (default: its
    own session's memory only; see `neuron_turn.loop.memory_tools`)."""
    memory_limits: MemoryLimits = field(default_factory=MemoryLimits)
    """How much one memory-tool result may hold (entries, bytes per value)."""
    session_conflict: SessionConflict = "append"
    """`fail`: the history append fails (`HistoryConflict`) if another run changed the
    session while this turn ran; `append` appends after it. A call's
    `TurnConfig.session_conflict` replaces it."""
    approval: ApprovalPolicy | None = None
    """Which tool calls (effect tools included) wait for a person's decision; the turn
    pauses with `{"custom": "awaiting_approval"}` (see `neuron_turn.loop.approval`)."""
    context_limit: int | None = None
    """Input tokens above which the context strategy is asked to compact. None: the
    model's context window as its provider reports it (`context_window(model)`), less
    `max_tokens` for the answer; 100,000 when the provider does not say."""
    compact_to: float = 0.75
    """A compaction aims at this fraction of the context limit, so the next few calls
    do not compact again at once."""
    context_pressure_at: Sequence[float] = (0.5, 0.75, 0.9)
    """Fill fractions of the context limit at which a `ContextPressure` event is emitted
    (each once on the way up; again after a compaction brought the fill below it)."""
    budget_warning_at: float = 0.8
    """Fraction of `max_cost` at which a `BudgetWarning` event is emitted (once per turn)."""
    record_costs: bool = False
    """Also declare each model call's `CostIncurred` as a `log` effect (compaction and
    budget events always are). Off by default: the output's metadata holds the total,
    and observers and the stream get every `CostIncurred` either way."""
    agent: str = "neuron_turn"
    """The agent name lifecycle events carry (`CostIncurred.agent`, ...)."""
    extra: Mapping[str, JsonValue] = field(default_factory=dict)
    """Provider-specific request options (thinking, reasoning effort, …)."""
    tool_choice: ToolChoice | str | None = None
    """`"auto"`, `"none"`, `"required"` or a tool's name (None: the provider's default, auto)."""
    reset_tool_choice: bool = True
    """Once the model has called a tool, a forced choice (`required`, a named tool) reverts
    to `auto`; without this a forced choice would make the model call tools forever."""
    parallel_tool_calls: bool | None = None
    """Let the model ask for several tool calls in one response (None: the provider's
    default). Sent as OpenAI `parallel_tool_calls`, Anthropic `disable_parallel_tool_use`."""
    output_mode: OutputMode | None = None
    """How a typed answer is asked for: `native`, `tool` or `prompted` (None: the
    provider's preferred mode; see `neuron_turn.OutputSpec`)."""
    output_retries: int = 2
    """Corrections a turn with an output type may ask for before it exits
    `{"custom": "output_invalid"}`."""
    step_model_settings: StepModelSettings | None = None
    """A function deciding each model call's settings from its `RunContext` (thinking on
    the first step only, a lower temperature after a failure), laid over the run's
    (`neuron_turn.loop.model_settings.StepModelSettings`); called before every model call."""
    end_strategy: EndStrategy = "early"
    """A final answer (`tool` mode) that comes with other tool calls: `early` ends the turn
    answering them unrun; `graceful` runs them first (as pydantic-ai's `end_strategy`), save
    those that would wait (for approval, for the caller), answered unrun."""
    thinking: Thinking | None = None
    """How much the model thinks before it answers, on any provider: `True`, `False` or
    `"minimal"` ... `"xhigh"` (None: the model's default; see `neuron_turn.loop.thinking`).
    The turn is refused when made if its provider does not take it."""
    sampling: Sampling | None = None
    """Sampling settings beyond `temperature` (`top_p`, `top_k`, `stop_sequences`, `seed`,
    penalties) on any provider (see `neuron_turn.loop.sampling`); the turn is refused
    when made if its provider does not take one that is set."""
    hosted_tools: Sequence[HostedTool] = ()
    """Tools the provider runs on its servers (`WebSearch`, `WebFetch`, `CodeExecution`),
    offered with every model call; the turn is refused when made if its provider lacks one
    (see `neuron_turn.loop.hosted_tools`)."""
    _model_settings: ModelSettings = field(init=False, repr=False, compare=False)
    """`temperature`, `max_tokens`, `thinking`, `sampling` and `parallel_tool_calls` as one
    `ModelSettings`, checked when made; a run's own are laid over it (`resolve`)."""

    @property
    def parsed_tool_choice(self) -> ToolChoice | None:
        """`tool_choice` as a `ToolChoice` (it is parsed when the config is made)."""
        choice = self.tool_choice
        return None if choice is None else ToolChoice.parse(choice)

    def __post_init__(self) -> None:
        """Parse `tool_choice`; refuse output, context and budget settings that cannot work.

        Raises:
            ValueError: naming the setting and the value.
        """
        if self.tool_choice is not None:
            object.__setattr__(self, "tool_choice", ToolChoice.parse(self.tool_choice))
        if isinstance(self.stop_at_tools, str):
            raise ValueError(
                "stop_at_tools is a collection of tool names, "
                f"not the string {self.stop_at_tools!r}"
            )
        object.__setattr__(self, "stop_at_tools", frozenset(self.stop_at_tools))
        object.__setattr__(self, "hosted_tools", as_hosted_tools(self.hosted_tools))
        if self.sampling is not None and not isinstance(self.sampling, Sampling):
            raise TypeError(f"sampling is a Sampling(...), not {type(self.sampling).__name__}")
        object.__setattr__(
            self,
            "_model_settings",
            ModelSettings(
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                thinking=self.thinking,
                sampling=self.sampling,
                parallel_tool_calls=self.parallel_tool_calls,
            ),
        )
        if self.end_strategy not in get_args(EndStrategy):
            raise ValueError(
                f"end_strategy must be one of {', '.join(get_args(EndStrategy))}; "
                f"got {self.end_strategy!r}"
            )
        if self.output_retries < 0:
            raise ValueError(f"output_retries must be 0 or more, not {self.output_retries}")
        if self.context_limit is not None and self.context_limit < 1:
            raise ValueError(f"context_limit must be at least 1; got {self.context_limit}")
        if not 0 < self.compact_to <= 1:
            raise ValueError(f"compact_to must be above 0 and at most 1; got {self.compact_to}")
        if not 0 < self.budget_warning_at <= 1:
            raise ValueError(
                f"budget_warning_at must be above 0 and at most 1; got {self.budget_warning_at}"
            )
        for fraction in self.context_pressure_at:
            if not 0 < fraction <= 1:
                raise ValueError(
                    f"context_pressure_at values must be above 0 and at most 1; got {fraction}"
                )

    def resolve(
        self, overrides: TurnConfig | None, options: CallOptions | None = None
    ) -> ResolvedConfig:
        """Return the settings for one call: `overrides` where set, these defaults elsewhere.

        `options` are the input's own (`TurnInput.metadata`): its usage limits and model
        settings over the config's, its stop tools beside the config's.
        """
        usage = None if options is None else options.usage_limits
        own = None if options is None else options.model_settings
        model_settings = self._model_settings if own is None else own.over(self._model_settings)
        limits = self.usage_limits if usage is None else usage.over(self.usage_limits)
        stops = frozenset(self.stop_at_tools)
        if options is not None and options.stop_at_tools:
            stops |= options.stop_at_tools
        if overrides is None:
            return ResolvedConfig(
                system=self.system or None,
                model=self.model,
                max_turns=self.max_turns,
                max_cost=self.max_cost,
                max_duration=self.max_duration,
                allowed_tools=None,
                effect_policy=self.effect_policy,
                session_conflict=self.session_conflict,
                usage_limits=limits or None,
                stop_at_tools=stops,
                model_settings=model_settings,
            )
        return ResolvedConfig(
            system=_join(self.system, overrides.system_addendum),
            model=overrides.model or self.model,
            max_turns=_pick(overrides.max_turns, self.max_turns),
            max_cost=_pick(overrides.max_cost, self.max_cost),
            max_duration=_pick(overrides.max_duration, self.max_duration),
            allowed_tools=(
                None if overrides.allowed_tools is None else frozenset(overrides.allowed_tools)
            ),
            effect_policy=_pick(overrides.effect_policy, self.effect_policy),
            session_conflict=_pick(overrides.session_conflict, self.session_conflict),
            usage_limits=limits or None,
            stop_at_tools=stops,
            model_settings=model_settings,
        )


@dataclass(frozen=True, slots=True)
class ResolvedConfig:
    """The settings in force for one call of `execute`."""

    system: str | None
    model: str
    max_turns: int
    max_cost: Money | None
    max_duration: int | None
    allowed_tools: frozenset[str] | None
    effect_policy: EffectPolicy
    session_conflict: SessionConflict
    usage_limits: UsageLimits | None = None
    """None when no usage limit is set: the loop then counts nothing for them."""
    stop_at_tools: frozenset[str] = frozenset()
    """The config's stop tools and the input's."""
    model_settings: ModelSettings = _NO_MODEL_SETTINGS
    """The config's model settings, with the input's own over them."""

    def allows(self, tool: str) -> bool:
        """Return whether `tool` may be offered and run in this call."""
        return self.allowed_tools is None or tool in self.allowed_tools


def _pick(override: _T | None, default: _T) -> _T:
    return default if override is None else override


def _join(system: str, addendum: str | None) -> str | None:
    parts: Sequence[str] = [part for part in (system, addendum) if part]
    return "\n".join(parts) or None
