"""`RunState`: everything one call of `NeuronTurn.execute` accumulates.

One instance per call, never shared, which is what makes a single
`NeuronTurn` safe to execute many times concurrently.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from moneyed import Money
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    Content,
    Effect,
    ExitReason,
    HistoryAppend,
    HookContext,
    HookPoint,
    LogEffect,
    LogLevel,
    SessionId,
    ToolCallRecord,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    usd,
)
from neuron_tool import ProgressReporter, RunContext, RunUsage

from ._convert import content_from_parts, history_to_json
from ._trusted import trusted
from .approval import merge_into, pending_in
from .config import ResolvedConfig
from .continuation import CarriedCounts
from .events import EffectDeclared, TurnEvent
from .hosted_tools import HostedTool
from .provider import (
    ContentPart,
    ProviderMessage,
    ProviderResponse,
    ToolResultPart,
    ToolUsePart,
)

if TYPE_CHECKING:
    from .guardrails import InputGuardrail
    from .standing import StandingDecision

__all__ = ["HISTORY_KEY", "RunState", "tool_call_record"]

_ZERO = usd()
_NOT_RUN = "Not run: the turn ended before this call ran."
_CHARGING: Final = threading.Lock()
_FIELD_NAMES = frozenset(HookContext.model_fields)
_RECORD_FIELDS = frozenset(ToolCallRecord.model_fields)


def _plain_answer(message: ProviderMessage) -> bool:
    """Whether `message` is the model's and calls no tool."""
    if message.role != "assistant":
        return False
    for part in message.content:
        if isinstance(part, ToolUsePart):
            return False
    return True


def _trusted_context(fields: dict[str, Any]) -> HookContext:
    """Build a HookContext from values the loop made valid, without re-validating."""
    return trusted(HookContext, fields, _FIELD_NAMES)


def tool_call_record(name: str, duration: int, success: bool) -> ToolCallRecord:
    """Return the record of one tool call: `name` as called, milliseconds, success."""
    if type(name) is not str or type(success) is not bool or not 0 <= duration < 2**64:
        # Not what the loop makes: validation says what is wrong, as it always did.
        return ToolCallRecord(name=name, duration=duration, success=success)
    fields = {"name": name, "duration": duration, "success": success}
    return trusted(ToolCallRecord, fields, _RECORD_FIELDS)


@dataclass(slots=True)
class RunState:
    """The mutable state of one turn: history, totals, records and declared effects."""

    settings: ResolvedConfig
    session: SessionId | None
    messages: list[ProviderMessage]
    """What the model sees: the history read, then this turn's messages (maybe compacted)."""
    history_length: int = 0
    """How many messages the stored history held when this turn read it."""
    new_from: int = 0
    """Where this turn's own messages start in `messages` (moves when compacting)."""
    flushed: list[ProviderMessage] = field(default_factory=list)
    """This turn's messages taken out of `messages` before a compaction."""
    turn_id: str = field(default_factory=lambda: os.urandom(16).hex())
    """Unique per execution: makes the history append idempotent."""
    started: float = field(default_factory=time.monotonic)
    effects: list[Effect] = field(default_factory=list)
    records: list[ToolCallRecord] = field(default_factory=list)
    cut_off: int = 0
    """Tool calls a cancelled round left unfinished (each given a result saying so)."""
    tokens_in: int = 0
    tokens_out: int = 0
    tool_calls: int = 0
    """The tool calls the model asked for, counted only under a `tool_calls` usage limit."""
    cost: Money = _ZERO
    turns_used: int = 0
    """The model calls this run of the turn has made (a resume or a continuation starts at 0)."""
    last_content: Sequence[ContentPart] = ()
    unpriced_models: set[str] = field(default_factory=set)
    """The models a warning already said have no price."""
    unpriced_fees: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    """By model and fee (a key of `_FEES`): the count the first warning named, the turn's."""
    failures_in_a_row: int = 0
    last_call: tuple[str, JsonValue] | None = None
    same_calls_in_a_row: int = 0
    sink: Callable[[TurnEvent], None] | None = None
    """Where the turn's events go (a stream, a timeline recorder); None emits nothing and
    costs nothing."""
    streamed: bool = False
    """Whether a consumer streams the turn: only then is the provider streamed too."""
    deps: object = None
    """The caller's dependencies, for tools asking for a `RunContext` and for instructions."""
    input: TurnInput | None = None
    """The input the turn was started with."""
    effects_emitted: int = 0
    sent: tuple[ProviderMessage, ...] = ()
    """The messages of the last model request the loop built (`request_messages`)."""
    sent_from: int = 0
    """How many of `messages` that request was built from."""
    call_ids: set[str] = field(default_factory=set)
    """The ids of the conversation's tool calls: the stored history's and this turn's."""
    hosted_tools: tuple[HostedTool, ...] = ()
    """The hosted tools this turn's model calls offer (its `allowed_tools` applied)."""
    checkpoint: Callable[[], None] | None = None
    """Hands the turn so far to a runner that asked (`neuron_turn.checkpointing`), after
    each round of tool calls; None when none asked."""
    standing: Mapping[str, StandingDecision] = field(default_factory=dict)
    """The session's standing decisions, by tool name (`neuron_turn.loop.standing`); read
    only by a turn with an approval policy."""
    input_guardrails: Sequence[InputGuardrail] = ()
    """The input guardrails the turn's next model call runs beside (`guardrails`): the first
    call's, for a turn with a new message; none after it."""
    _merged: list[ProviderMessage] = field(default_factory=list)
    _merged_of: list[ProviderMessage] | None = None
    _merged_last: ProviderMessage | None = None
    _merged_count: int = 0

    def request_messages(self) -> tuple[ProviderMessage, ...]:
        """Return `merge_results(messages)` for a request, merging only the new messages.

        A snapshot (a tuple), so a provider that keeps the request sees it unchanged.
        `messages` only grows at its end, or loses and regains its last message,
        or is replaced (compaction): another list or a changed last message starts over.
        """
        messages = self.messages
        done = self._merged_count
        if (
            self._merged_of is not messages
            or done > len(messages)
            or (done and messages[done - 1] is not self._merged_last)
        ):
            self._merged, self._merged_of, done = [], messages, 0
        merged = self._merged
        for index in range(done, len(messages)):
            merge_into(merged, messages[index])
        self._merged_count = len(messages)
        self._merged_last = messages[-1] if messages else None
        self.sent, self.sent_from = tuple(merged), len(messages)
        return self.sent

    def emit(self, event: TurnEvent) -> None:
        """Send `event` to the sink, after an `EffectDeclared` for each effect not yet sent.

        Effects are appended in several places (effect tools, unpriced models);
        flushing them here, before the next event, reports each one as soon as
        anything else happens, in declaration order, without hooking every append.
        Call only when `sink` is set.
        """
        sink = self.sink
        assert sink is not None
        self.flush_effects()
        sink(event)

    def flush_effects(self) -> None:
        """Send an `EffectDeclared` for each effect declared since the last flush."""
        sink = self.sink
        if sink is None:
            return
        while self.effects_emitted < len(self.effects):
            sink(EffectDeclared(self.effects[self.effects_emitted]))
            self.effects_emitted += 1

    @property
    def deadline(self) -> float | None:
        """When `max_duration` ends, on the `time.monotonic()` clock; None without a limit."""
        limit = self.settings.max_duration
        return None if limit is None else self.started + limit / 1000

    def elapsed_ms(self) -> int:
        """Milliseconds since the turn started."""
        return int((time.monotonic() - self.started) * 1000)

    def tool_context(
        self,
        name: str,
        call_id: str | None = None,
        reporter: ProgressReporter | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> RunContext[Any]:
        """Return what tool `name` (its call `call_id`, or its `prepare`) sees of the run.

        Built only for a tool that asks for a context or has a `prepare`: the usage
        snapshot in it costs the other tools nothing.
        """
        return self._context(name, call_id, reporter, loop)

    def step_context(self) -> RunContext[Any]:
        """Return what a tool source asked before a model call (`per_step`) sees of the run."""
        return self._context(None)

    def _context(
        self,
        name: str | None,
        call_id: str | None = None,
        reporter: ProgressReporter | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> RunContext[Any]:
        return RunContext(
            deps=self.deps,
            session=self.session,
            input=self.input,
            deadline=self.deadline,
            tool_name=name,
            tool_call_id=call_id,
            reporter=reporter,
            loop=loop,
            step=self.turns_used,
            usage=self.usage(),
            charger=self.charge,
        )

    def usage(self) -> RunUsage:
        """Return what the turn has used so far, as a tool's `RunContext` shows it."""
        return RunUsage(
            input_tokens=self.tokens_in,
            output_tokens=self.tokens_out,
            cost=self.cost,
            tool_calls=len(self.records),
        )

    def hook_context(
        self,
        point: HookPoint,
        *,
        tool_name: str | None = None,
        tool_input: JsonValue = None,
        tool_result: str | None = None,
        model_output: Content | None = None,
    ) -> HookContext:
        """Return what a hook at `point` sees now."""
        return _trusted_context(
            {
                "point": point,
                "tool_name": tool_name,
                "tool_input": tool_input,
                "tool_result": tool_result,
                "model_output": model_output,
                "tokens_used": self.tokens_in + self.tokens_out,
                "cost": self.cost,
                "turns_completed": self.turns_used,
                "elapsed": int((time.monotonic() - self.started) * 1000),
            }
        )

    def account(self, response: ProviderResponse) -> None:
        """Add a response's tokens and cost; declare one warning per model with no price.

        A priced call whose web searches no price covers declares its own warning,
        once per model, so a search fee left out of the cost is never silent.
        """
        self.tokens_in += response.usage.input_tokens
        self.tokens_out += response.usage.output_tokens
        cost = response.cost
        if cost is not None:
            total = self.cost
            # Money's own addition checks the currencies and goes through `__eq__(0)`
            # first; the common case (both USD, the same Currency) is a Decimal sum.
            same = cost.currency is total.currency
            self.cost = Money(total.amount + cost.amount, total.currency) if same else total + cost
        elif response.model not in self.unpriced_models:
            self.unpriced_models.add(response.model)
            self.effects.append(
                LogEffect(
                    level=LogLevel.WARN,
                    message=f"price unknown for model {response.model!r}; its cost is not counted",
                    data={"model": response.model},
                )
            )
        if cost is not None:
            if response.unpriced_web_searches > 0:
                self._declare_unpriced(response.model, _SEARCHES, response.unpriced_web_searches)
            if response.unpriced_images > 0:
                self._declare_unpriced(response.model, _IMAGES, response.unpriced_images)
            if response.unpriced_code_executions > 0:
                self._declare_unpriced(response.model, _CODE, response.unpriced_code_executions)

    def _declare_unpriced(self, model: str, fee: str, count: int) -> None:
        counts = self.unpriced_fees.get((model, fee))
        if counts is not None:
            counts[1] += count  # the turn's output says the total (`_unpriced_totals`)
            return
        self.unpriced_fees[model, fee] = [count, count]
        self.effects.append(_unpriced_warning(model, fee, count, "its"))

    def _unpriced_totals(self) -> list[LogEffect]:
        """A warning of the total for each model and fee whose later calls were unpriced too.

        The first warning went out when its call ended (a stream's reader saw it then),
        so it cannot grow; this one, with the output, says how many in all.
        """
        return [
            _unpriced_warning(model, fee, total, "in all, this turn's")
            for (model, fee), (first, total) in self.unpriced_fees.items()
            if total > first
        ]

    def charge(self, cost: Money | None, input_tokens: int, output_tokens: int) -> None:
        """Add what a tool's own model call used (`RunContext.charge`, checked there).

        Under a lock: a plain `def` tool charges from its worker thread while
        other tools of the round may charge on the loop's (one lock for every run:
        charges are rare, and a turn that makes none pays nothing for it).
        """
        with _CHARGING:
            self.tokens_in += input_tokens
            self.tokens_out += output_tokens
            if cost is not None:
                self.cost = self.cost + cost

    def note_call(self, name: str, input: JsonValue, *, success: bool) -> None:
        """Update the consecutive-failure and identical-call counts, in the model's order."""
        self.failures_in_a_row = 0 if success else self.failures_in_a_row + 1
        # JSON values compare by value (dict order aside), so no serialising here.
        call = (name, input)
        self.same_calls_in_a_row = self.same_calls_in_a_row + 1 if call == self.last_call else 1
        self.last_call = call

    def counts(self, output_failures: int) -> CarriedCounts:
        """The counts a continuation of this run carries over (see `continuation`)."""
        return CarriedCounts(
            self.failures_in_a_row, self.same_calls_in_a_row, self.last_call, output_failures
        )

    def carry(self, counts: CarriedCounts) -> None:
        """Go on counting from where the part this run continues left off."""
        self.failures_in_a_row = counts.failures_in_a_row
        self.same_calls_in_a_row = counts.identical_calls
        self.last_call = counts.last_call

    def close_unanswered(self) -> None:
        """Give each call of this turn's last model answer that never ran an error result.

        A turn can end with calls the loop did not run: an `end_turn` answer
        that also asks for tools, a hook halting after the model's answer, the
        deadline. Model APIs refuse a call without its result, and the next
        turn on the session would take the calls for ones awaiting approval;
        a turn that pauses for approval leaves its calls open on purpose.
        """
        messages = self.messages
        if len(messages) <= self.new_from or _plain_answer(messages[-1]):
            return  # the usual end: an answer that asks for no tool
        unanswered = pending_in(messages[self.new_from :])
        if unanswered:
            results = [ToolResultPart(call.id, _NOT_RUN, is_error=True) for call in unanswered]
            self.messages.append(ProviderMessage("user", results))

    def drop_refused_answer(self) -> None:
        """Take out this turn's last message when it is the model's answer the turn refused.

        A turn failing on the model's answer (truncated, filtered, a tool stop
        asking for no tool) has it last: a partial turn keeps what came before,
        so its continuation asks the model again from there.
        """
        messages = self.messages
        if len(messages) > self.new_from and messages[-1].role == "assistant":
            messages.pop()

    def stored_position(self, index: int) -> int:
        """Where `messages[index]`, one of this turn's, stands in the session's stored history.

        Once the turn's messages are appended to what it read, compacted or not.
        """
        return self.history_length + len(self.flushed) + index - self.new_from

    def new_messages(self) -> list[ProviderMessage]:
        """This turn's messages, its user message first, whatever compaction did to `messages`."""
        return [*self.flushed, *self.messages[self.new_from :]]

    def replace_messages(self, compacted: Sequence[ProviderMessage]) -> None:
        """Put a compacted context in place, keeping this turn's messages for the history."""
        self.flushed.extend(self.messages[self.new_from :])
        self.messages = list(compacted)
        self.new_from = len(self.messages)

    def output(self, exit_reason: ExitReason) -> TurnOutput:
        """Return the turn's output: last model content, totals, effects, then the history append.

        The append carries only this turn's messages (see `layer0.history`),
        so turns running at once on one session never overwrite each other.
        """
        effects = list(self.effects)
        if self.unpriced_fees:
            effects.extend(self._unpriced_totals())
        session = self.session
        new = [] if session is None else self.new_messages()
        # A continuation that a limit ends before its first model call has nothing to append.
        if session is not None and new:
            fail = self.settings.session_conflict == "fail"
            messages = history_to_json(new)
            assert isinstance(messages, list)
            append = HistoryAppend(
                session=self.session,
                turn_id=self.turn_id,
                messages=messages,
                expected_length=self.history_length if fail else None,
            )
            effects.append(append.effect())
        metadata = TurnMetadata(
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost=self.cost,
            turns_used=self.turns_used,
            tools_called=list(self.records),
            duration=self.elapsed_ms(),
        )
        message = content_from_parts(self.last_content) if self.last_content else Content("")
        return TurnOutput(
            message=message, exit_reason=exit_reason, metadata=metadata, effects=effects
        )


_SEARCHES: Final = "web_searches"
_IMAGES: Final = "images"
_CODE: Final = "code_executions"
_FEES: Final = {
    _SEARCHES: ("web search", "web search", "web searches"),
    _IMAGES: ("image generation", "image", "images"),
    _CODE: ("code execution container", "code execution's fee", "code executions' fees"),
}
"""Each hosted fee a price may not cover: what it is, one, many (its `data` key: the fee)."""


def _unpriced_warning(model: str, fee: str, count: int, whose: str) -> LogEffect:
    """The warning that `count` of `model`'s `fee` (web searches, images) are not in the cost."""
    what, one, many = _FEES[fee]
    counted = f"1 {one} is" if count == 1 else f"{count} {many} are"
    return LogEffect(
        level=LogLevel.WARN,
        message=(
            f"{what} price unknown for model {model!r}; {whose} {counted} not counted in the cost"
        ),
        data={"model": model, fee: count},
    )
