"""Turn records: what happened inside a turn, kept by the orchestrator beside the history.

A turn's output says what it ended with; its record says how it got there:
a timeline of model calls (model, tokens, cost, duration, stop reason), tool
calls (input, output or error, duration), effects as they were declared
(lifecycle events among them, as `log` effects), hook halts and limits, with
what the orchestrator then did with the effects.

The turn builds the timeline; the orchestrator builds the record. The
timeline crosses from one to the other in a wire form the Rust reference
already carries, a `custom` effect, and only when asked for:

- an input asks for it with `metadata = {"neuron_turn": {"record": true}}`
  (`request_timeline`); a turn that honours it adds, as its last effect,
  `{"type": "custom", "effect_type": "turn_timeline", "data": {"turn_id": ...,
  "entries": [...]}}`;
- the orchestrator takes that effect out of the output (`take_timeline`)
  before checking and running the others, and stores a `TurnRecord` in a
  `TurnRecordStore`. A turn that does not honour the request still gets a
  record, from its output alone, with an empty timeline.

Entry times (`start`, `at`) are milliseconds since the turn began.
"""

from __future__ import annotations

import builtins
from typing import Annotated, ClassVar, Final, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import Field, JsonValue

from ._payload import EffectPayload
from ._scalars import U32, U64, StrictBool
from ._tagged import Frozen
from .duration import DurationMs
from .effect import CustomEffect, Effect
from .exit_reason import ExitReason
from .ids import AgentId, SessionId, WorkflowId
from .json_value import Json
from .money import Cost
from .turn_input import TurnInput
from .turn_output import TurnOutput

__all__ = [
    "RECORD_OPTION",
    "TURN_TIMELINE",
    "EffectEntry",
    "HookHaltEntry",
    "LimitEntry",
    "ModelCallEntry",
    "RecordStatus",
    "SessionTurns",
    "TimelineEntry",
    "ToolCallEntry",
    "TurnRecord",
    "TurnRecordReader",
    "TurnRecordStore",
    "TurnSummary",
    "TurnTimeline",
    "request_timeline",
    "take_timeline",
]

TURN_TIMELINE: Final = "turn_timeline"
"""The `effect_type` of the custom effect that carries a turn's timeline."""

RECORD_OPTION: Final = "record"
"""The key, in `metadata["neuron_turn"]`, that asks a turn for its timeline."""

_OPTIONS_KEY: Final = "neuron_turn"


class ModelCallEntry(Frozen):
    """One model call: which model, when, how long, why it stopped, tokens and cost."""

    kind: Literal["model_call"] = "model_call"
    call: U32
    """Counts from 1 within the turn."""
    model: str
    start: DurationMs
    duration: DurationMs
    stop_reason: str
    input_tokens: U64
    output_tokens: U64
    cache_read_tokens: U64 | None = None
    cache_creation_tokens: U64 | None = None
    cost: Cost | None = None
    """None: the model's price is unknown."""


class ToolCallEntry(Frozen):
    """One tool call: its input, its output (or error text), when and how long."""

    kind: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    input: Json
    output: str
    """The result text the model read (the error text when `is_error`)."""
    is_error: StrictBool
    start: DurationMs
    duration: DurationMs
    truncated: StrictBool = False
    """`output` was cut to keep the record small (the history holds it whole)."""


class EffectEntry(Frozen):
    """An effect the turn declared, when it declared it."""

    kind: Literal["effect"] = "effect"
    at: DurationMs
    effect: Effect


class HookHaltEntry(Frozen):
    """A hook halted the turn."""

    kind: Literal["hook_halt"] = "hook_halt"
    at: DurationMs
    reason: str


class LimitEntry(Frozen):
    """A limit ended the turn (max turns, budget, timeout, circuit breaker, stuck)."""

    kind: Literal["limit"] = "limit"
    at: DurationMs
    reason: ExitReason


TimelineEntry: TypeAlias = Annotated[
    ModelCallEntry | ToolCallEntry | EffectEntry | HookHaltEntry | LimitEntry,
    Field(discriminator="kind"),
]
"""One thing that happened in a turn; tagged by `"kind"`."""


class TurnTimeline(EffectPayload):
    """The data of a `turn_timeline` custom effect: a turn's id and its timeline."""

    EFFECT_TYPE: ClassVar[str] = TURN_TIMELINE

    turn_id: str = Field(min_length=1)
    """The turn's id (the `turn_id` of its history append, when it has a session)."""
    entries: list[TimelineEntry]
    """In the order things happened."""


RecordStatus: TypeAlias = Literal["executed", "accepted", "refused", "failed"]
"""What became of the turn and its effects.

`executed`: the orchestrator carried out every effect. `accepted`: the
effects passed every check and were handed on to run (a durable
orchestrator runs them in later steps). `refused`: an effect was outside
the agent's policy, so none ran. `failed`: the turn raised, or its effects
failed; `error` says how.
"""


class TurnRecord(Frozen):
    """Everything kept about one turn: input, output, timeline, and what became of it."""

    turn_id: str = Field(min_length=1)
    session: SessionId | None = None
    agent: AgentId
    workflow_id: WorkflowId
    started: str
    """When the orchestrator started the turn: ISO 8601, UTC."""
    input: TurnInput
    output: TurnOutput | None = None
    """None when the turn raised instead of returning."""
    timeline: list[TimelineEntry] = Field(default_factory=list)
    """Empty when the turn keeps none (another `layer0.Turn`) or raised."""
    status: RecordStatus
    error: str | None = None
    delegated_for: SessionId | None = None
    """A run without a session that a turn delegated: the session of that turn (at any depth,
    the nearest that had one). None: not delegated, run in a session, or recorded before
    this was kept. Why: forgetting the session (`neuron_turn.forget_session`) finds the
    records of the runs it delegated to, which hold the tasks it passed on."""

    def summary(self) -> TurnSummary:
        """Return the one-line view of this record that listings show."""
        output = self.output
        metadata = None if output is None else output.metadata
        text = self.input.message.as_text() or ""
        return TurnSummary(
            turn_id=self.turn_id,
            session=self.session,
            agent=self.agent,
            started=self.started,
            status=self.status,
            title=" ".join(text.split())[:80],
            exit_reason=None if output is None else output.exit_reason,
            tokens_in=0 if metadata is None else metadata.tokens_in,
            tokens_out=0 if metadata is None else metadata.tokens_out,
            cost=None if metadata is None else metadata.cost,
            duration=0 if metadata is None else metadata.duration,
        )


class TurnSummary(Frozen):
    """One turn in a listing: its id, when, what it was asked, how it ended, what it used."""

    turn_id: str
    session: SessionId | None = None
    agent: AgentId
    started: str
    status: RecordStatus
    title: str
    """The start of the input's text, on one line."""
    exit_reason: ExitReason | None = None
    tokens_in: U64 = 0
    tokens_out: U64 = 0
    cost: Cost | None = None
    duration: DurationMs = 0


class SessionTurns(Frozen):
    """A session as turn records see it: how many turns, first and last, its first title."""

    session: SessionId | None
    """None gathers the turns run without a session."""
    turns: U32
    started: str
    updated: str
    title: str


@runtime_checkable
class TurnRecordReader(Protocol):
    """Read access to turn records (a viewer or the command line needs no more)."""

    async def turn_record(self, turn_id: str) -> TurnRecord | None:
        """Return the record of `turn_id`, or None when there is none."""
        ...

    async def turn_summaries(
        self, *, session: SessionId | None = None, limit: int = 100
    ) -> builtins.list[TurnSummary]:
        """Return up to `limit` turns, newest first; only `session`'s when it is given."""
        ...

    async def turn_sessions(self, *, limit: int = 100) -> builtins.list[SessionTurns]:
        """Return up to `limit` sessions that have turn records, most recently used first."""
        ...


@runtime_checkable
class TurnRecordStore(TurnRecordReader, Protocol):
    """A store that keeps turn records; orchestrators write one per turn they run."""

    async def record_turn(self, record: TurnRecord) -> None:
        """Store `record`, replacing any record with its `turn_id`.

        Raises:
            WriteFailed: the store refused; nothing was written.
        """
        ...


def request_timeline(input: TurnInput) -> TurnInput:
    """Return `input` asking the turn for its timeline (see the module doc).

    An input whose metadata is not an object (or whose `neuron_turn` options
    are not) cannot carry the request and is returned as it is.
    """
    metadata: JsonValue = input.metadata
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        return input
    options = metadata.get(_OPTIONS_KEY) or {}
    if not isinstance(options, dict):
        return input
    asked = {**metadata, _OPTIONS_KEY: {**options, RECORD_OPTION: True}}
    return input.model_copy(update={"metadata": asked})


def take_timeline(output: TurnOutput) -> tuple[TurnOutput, TurnTimeline | None]:
    """Split a turn's output into the output without its timeline effect, and the timeline.

    An output without one comes back as it is, with None.

    Raises:
        ValueError: a `turn_timeline` effect is malformed.
    """
    kept: list[Effect] = []
    timeline: TurnTimeline | None = None
    for effect in output.effects:
        if isinstance(effect, CustomEffect) and effect.effect_type == TURN_TIMELINE:
            timeline = TurnTimeline.from_effect(effect)
        else:
            kept.append(effect)
    if timeline is None:
        return output, None
    return output.model_copy(update={"effects": kept}), timeline
