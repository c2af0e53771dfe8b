"""The loop's context step and accounting events: measure, report pressure, compact, report cost.

One `ContextKeeper` per run. It measures the context as the input tokens
the provider reported for the last call plus a calibrated estimate of what
was added since (`TokenMeter`), emits `ContextPressure` as the fill passes
the configured thresholds, asks the strategy to compact when it says so
(with `PreCompactionFlush` before and `CompactionComplete` after), and after
every model call emits `CostIncurred` and, near `max_cost`, `BudgetWarning`.

Each event is given to the hook registry's lifecycle observers and declared
as a `log` effect, so orchestrators record it with the turn (`CostIncurred`
only with `record_costs` on: the output's metadata already holds the total),
and, in a streamed turn, sent as a `Lifecycle` event. A turn stopped by its
cost budget ends with `BudgetAction(action="halt_workflow")`.
"""

from __future__ import annotations

import functools
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Final

from layer0 import (
    BudgetAction,
    BudgetWarning,
    CompactionComplete,
    ContextPressure,
    CostIncurred,
    CustomScope,
    LogEffect,
    LogLevel,
    PreCompactionFlush,
    Scope,
    SessionScope,
    usd,
)
from neuron_hooks import HookRegistry, LifecycleEvent, lifecycle_log
from neuron_tool import ToolSchema

from ._run import RunState
from .config import NeuronTurnConfig
from .context import CompactionBudget, ContextStrategy, accepts_keyword
from .events import Lifecycle
from .model_requests import check_model_request
from .provider import Provider, ProviderMessage, ProviderRequest, ProviderResponse
from .tokens import RunningEstimate, TokenMeter, estimate_tokens

__all__ = ["DEFAULT_CONTEXT_LIMIT", "AccountedProvider", "ContextKeeper", "context_limit"]


DEFAULT_CONTEXT_LIMIT: Final = 100_000
"""The context limit when neither the configuration nor the provider gives one."""


def context_limit(
    config: NeuronTurnConfig, provider: Provider, model: str, max_tokens: int | None
) -> int:
    """Return the input tokens a request may take: configured, else the model's window.

    A provider may say how large a model's window is with an optional method
    `context_window(model) -> int | None`; room for the answer (`max_tokens`)
    is taken off it.
    """
    if config.context_limit is not None:
        return config.context_limit
    window = _provider_window(provider, model)
    if window is None:
        return DEFAULT_CONTEXT_LIMIT
    return max(1, window - (max_tokens or 0))


def _provider_window(provider: Provider, model: str) -> int | None:
    method = getattr(provider, "context_window", None)
    if not callable(method):
        return None
    window = method(model)
    if window is None:
        return None
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        raise TypeError(
            f"{type(provider).__name__}.context_window({model!r}) returned {window!r}; "
            "expected a positive int or None"
        )
    return window


@dataclass(slots=True)
class ContextKeeper:
    """The context and accounting step of one run (see the module doc)."""

    run: RunState
    strategy: ContextStrategy | None
    meter: TokenMeter
    hooks: HookRegistry
    provider: Provider
    config: NeuronTurnConfig
    limit: int
    system: str | None
    tools: Sequence[ToolSchema]
    _anchor: tuple[int, int] | None = None
    """(messages sent, input tokens reported) of the last call, while they still describe
    a prefix of the context; None before the first report and after a compaction."""
    _pressure: int = 0
    """How many of the sorted pressure thresholds the fill has passed."""
    _warned: bool = False
    _levels: tuple[float, ...] = field(default=())
    """The pressure thresholds in tokens, ascending."""
    _estimate: RunningEstimate = field(default_factory=RunningEstimate)
    model: str = field(init=False)
    """The model the turn asks for; the meter calibrates under this name."""
    _used: int = 0
    """The context's size at the last `settle`."""
    _rising: bool = False
    """Whether the last `settle` passed a pressure level the one before had not."""

    def __post_init__(self) -> None:
        thresholds = sorted(set(self.config.context_pressure_at))
        self._levels = tuple(t * self.limit for t in thresholds)
        self.model = self.run.settings.model

    def measure(self) -> int:
        """Return the context's size in the model's tokens, system prompt and tools included."""
        messages = self.run.messages
        anchor = self._anchor
        if anchor is not None and anchor[0] <= len(messages):
            sent, reported = anchor
            return reported + self.meter.scale(self.model, self._estimate.tokens(messages, sent))
        return self._overhead() + self.meter.scale(self.model, self._estimate.tokens(messages))

    def _overhead(self) -> int:
        return self.meter.scale(self.model, self.meter.overhead(self.system, self.tools))

    def after_call(self, request: ProviderRequest, response: ProviderResponse) -> bool:
        """Learn from the call's reported input tokens; return whether `report_call` has work.

        Split from `report_call` so that a call with no event to emit makes no coroutine.
        """
        reported = response.usage.input_tokens
        run = self.run
        own = request.messages is run.sent and run.sent_from <= len(run.messages)
        estimated = self.meter.overhead(request.system, request.tools) + (
            self._estimate.tokens(run.messages, 0, run.sent_from)
            if own
            else estimate_tokens(request.messages)
        )
        self.meter.calibrate(self.model, estimated=estimated, reported=reported)
        if reported > 0 and (
            self._own_request_valid(request) if own else self._anchor_valid(request.messages)
        ):
            self._anchor = (len(request.messages), reported)
        return self._reports_cost() or (run.settings.max_cost is not None and not self._warned)

    def _reports_cost(self) -> bool:
        """Whether a `CostIncurred` is recorded, streamed or observed (else `emit` drops it)."""
        return (
            self.config.record_costs
            or self.run.sink is not None
            or self.hooks.has_lifecycle_observers()
        )

    async def report_call(self, response: ProviderResponse) -> None:
        """Emit the call's `CostIncurred` and, near `max_cost`, `BudgetWarning`."""
        run = self.run
        if self._reports_cost():
            cost = response.cost if response.cost is not None else usd()
            await self.emit(CostIncurred(agent=self.config.agent, cost=cost, cumulative=run.cost))
        limit = run.settings.max_cost
        if (
            limit is not None
            and not self._warned
            and run.cost.amount >= limit.amount * _decimal(self.config.budget_warning_at)
        ):
            self._warned = True
            await self.emit(BudgetWarning(workflow=self._workflow(), spent=run.cost, limit=limit))

    def _own_request_valid(self, request: ProviderRequest) -> bool:
        """`_anchor_valid` for the loop's own last request, in constant time.

        Its messages are `run.messages[:sent_from]` themselves unless results were
        merged (then there are fewer of them); only the answer was appended since.
        """
        sent, run = request.messages, self.run
        return len(sent) == run.sent_from and (not sent or run.messages[len(sent) - 1] is sent[-1])

    def _anchor_valid(self, sent: Sequence[ProviderMessage]) -> bool:
        messages = self.run.messages
        return len(sent) <= len(messages) and all(
            a is b for a, b in zip(sent, messages, strict=False)
        )

    async def step(self) -> None:
        """Report pressure and compact when the strategy says so (turn-loop.md step 10)."""
        if self.settle():
            await self.act()

    def settle(self) -> bool:
        """Measure the context and note the pressure; return whether `act` has work.

        The first half of `step`: a step with nothing to report or compact makes no coroutine.
        """
        used = self._used = self.measure()
        passed = bisect_right(self._levels, used)  # the levels at or below `used`
        self._rising, self._pressure = passed > self._pressure, passed
        return self._rising or self.strategy is not None

    async def act(self) -> None:
        """The second half of `step`: report the pressure `settle` saw rise, compact if due."""
        used = self._used
        if self._rising:
            await self._report_pressure(used)
        strategy = self.strategy
        if strategy is None or not self._should_compact(strategy, used):
            return
        await self.emit(PreCompactionFlush(agent=self.config.agent, scope=self._scope()))
        budget = CompactionBudget(
            limit=self._target(),
            tokens=used - self._overhead(),
            count=lambda messages: self.meter.count(self.model, messages),
            provider=AccountedProvider(self.provider, self),
            model=self.model,
            account=lambda other: AccountedProvider(other, self),
        )
        if _takes(type(strategy), "compact", "budget"):
            compacted = await strategy.compact(self.run.messages, budget=budget)  # type: ignore[call-arg]
        else:
            compacted = await strategy.compact(self.run.messages)
        self.run.replace_messages(compacted)
        self._anchor = None
        after = self.measure()
        await self.emit(
            CompactionComplete(
                agent=self.config.agent,
                strategy=_strategy_name(strategy),
                tokens_freed=max(0, used - after),
            )
        )
        self._pressure = bisect_right(self._levels, after)
        if after > self.limit:
            self.run.effects.append(
                LogEffect(
                    level=LogLevel.WARN,
                    message=(
                        f"compaction by {_strategy_name(strategy)} left {after} tokens, "
                        f"above the context limit of {self.limit}"
                    ),
                    data={"tokens": after, "limit": self.limit},
                )
            )

    def _should_compact(self, strategy: ContextStrategy, used: int) -> bool:
        messages = self.run.messages
        if _takes(type(strategy), "should_compact", "used"):
            return bool(strategy.should_compact(messages, self.limit, used=used))  # type: ignore[call-arg]
        return bool(strategy.should_compact(messages, self.limit))

    def _target(self) -> int:
        return max(1, int(self.limit * self.config.compact_to) - self._overhead())

    async def _report_pressure(self, used: int) -> None:
        await self.emit(
            ContextPressure(
                agent=self.config.agent,
                fill_percent=round(100 * used / self.limit, 2),
                tokens_used=used,
                tokens_available=max(0, self.limit - used),
            )
        )

    def _scope(self) -> Scope:
        session = self.run.session
        return SessionScope(id=session) if session is not None else CustomScope(name="turn")

    def _workflow(self) -> str:
        session = self.run.session
        return session if session is not None else self.config.agent

    async def emit(self, event: LifecycleEvent) -> None:
        """Declare `event` as a `log` effect and give it to the lifecycle observers.

        A `CostIncurred` is declared only with `record_costs` on.
        """
        run = self.run
        if self.config.record_costs or not isinstance(event, CostIncurred):
            run.effects.append(lifecycle_log(event))
        if run.sink is not None:
            run.emit(Lifecycle(event))
        if self.hooks.has_lifecycle_observers():
            await self.hooks.notify(event)

    async def budget_halted(self) -> None:
        """Report that the cost budget stopped the turn (`BudgetAction` "halt_workflow")."""
        await self.emit(BudgetAction(workflow=self._workflow(), action="halt_workflow"))


class AccountedProvider:
    """The turn's provider as a strategy sees it: each call counted in the turn and reported.

    A summary costs tokens and money like any model call; counting it keeps
    the turn's totals, its `max_cost` and its `CostIncurred` events true.
    """

    def __init__(self, provider: Provider, keeper: ContextKeeper) -> None:
        """Wrap `provider`; account its calls in `keeper`'s run."""
        self._provider = provider
        self._keeper = keeper

    def __repr__(self) -> str:
        return f"AccountedProvider({self._provider!r})"

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make the call, add its tokens and cost to the turn, emit `CostIncurred`."""
        check_model_request(self._provider)
        response = await self._provider.complete(request)
        run = self._keeper.run
        run.account(response)
        cost = response.cost if response.cost is not None else usd()
        await self._keeper.emit(
            CostIncurred(agent=self._keeper.config.agent, cost=cost, cumulative=run.cost)
        )
        return response

    def context_window(self, model: str) -> int | None:
        """The wrapped provider's window for `model`, if it says."""
        return _provider_window(self._provider, model)


@functools.lru_cache(maxsize=256)
def _takes(kind: type, method: str, keyword: str) -> bool:
    """Whether the strategy class's `method` takes `keyword`; asked on every iteration."""
    function = getattr(kind, method, None)
    return function is not None and accepts_keyword(function, keyword)


def _strategy_name(strategy: ContextStrategy) -> str:
    name = getattr(strategy, "name", None)
    return name if isinstance(name, str) and name else type(strategy).__name__


def _decimal(fraction: float) -> Decimal:
    return Decimal(str(fraction))
