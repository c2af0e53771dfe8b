"""The events a streamed turn yields, and the deltas a streaming provider yields.

`NeuronTurn.stream` yields them in the order things happen: a model call
starts, its text, thinking and tool-call deltas arrive, the call ends with
its usage and cost, the tools run (each with its own duration, and
`ToolProgress` reports from tools that ask for a `RunContext`), effects are
declared, a hook or a limit may stop the turn, and last `TurnDone` carries
the `TurnOutput` that `execute` would have returned. A turn with an output
type also yields `OutputDelta`: its answer, typed, as far as it has arrived.
A streaming provider
yields the four delta types and ends with its `ProviderResponse`.

They are frozen slotted dataclasses, built on the hot path of a stream; each
has a `kind` tag, and `event_json` gives the JSON a program reads
(`neuron-turn run --jsonl`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, TypeAlias

from moneyed import Money
from pydantic import ConfigDict, JsonValue, TypeAdapter

from layer0 import Effect, ExitReason, TurnOutput, usd
from neuron_hooks import LifecycleEvent, ToolProgress

from .hosted_tools import HostedToolCall
from .provider import ProviderRequest, ProviderResponse, StopReason, TokenUsage

__all__ = [
    "EffectDeclared",
    "HookHalted",
    "Lifecycle",
    "LimitReached",
    "ModelCallDone",
    "ModelCallStart",
    "OutputDelta",
    "ProviderDelta",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallStart",
    "ToolProgress",
    "ToolResult",
    "ToolStart",
    "TurnDone",
    "TurnEvent",
    "event_from_json",
    "event_json",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's answer text, as it arrives."""

    kind: ClassVar[str] = "text_delta"
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's visible reasoning, as it arrives."""

    kind: ClassVar[str] = "thinking_delta"
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """The model began writing a tool call; its arguments follow as `ToolCallDelta`s."""

    kind: ClassVar[str] = "tool_call_start"
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call's arguments (JSON text), for the call with this `id`."""

    kind: ClassVar[str] = "tool_call_delta"
    id: str
    arguments: str


@dataclass(frozen=True, slots=True)
class OutputDelta:
    """The turn's typed answer as far as it has arrived (a streamed turn with an output type).

    Yielded each time the answer grows into a different value that validates
    as far as it goes: its last string, list item or entry may be cut short,
    a number still arriving is left out, and the required fields are there.
    See `neuron_turn.loop._output_follower`.
    """

    kind: ClassVar[str] = "output_delta"
    value: Any
    """The answer so far as the output type (for a raw JSON Schema, its JSON); rebuilt by
    `event_from_json`, its JSON."""
    data: JsonValue
    """The answer so far as JSON (the output type's fields, defaults included)."""


@dataclass(frozen=True, slots=True)
class ModelCallStart:
    """A model call is about to be made; `call` counts from 1 within the turn."""

    kind: ClassVar[str] = "model_call_start"
    call: int
    request: ProviderRequest | None = field(default=None, compare=False, repr=False)
    """The request about to be sent (for observers; not in the event's JSON)."""


@dataclass(frozen=True, slots=True)
class ModelCallDone:
    """A model call finished: its own usage and cost (None: the model's price is unknown)."""

    kind: ClassVar[str] = "model_call_done"
    call: int
    model: str
    stop_reason: StopReason
    usage: TokenUsage
    cost: Money | None
    response: ProviderResponse | None = field(default=None, compare=False, repr=False)
    """The response itself (for observers; not in the event's JSON)."""
    hosted_calls: tuple[HostedToolCall, ...] = ()
    """The hosted tools' calls the provider ran for the answer (web searches, code)."""


@dataclass(frozen=True, slots=True)
class ToolStart:
    """A tool call is about to run (or to be declared, for an effect tool)."""

    kind: ClassVar[str] = "tool_start"
    id: str
    name: str
    input: JsonValue


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool call finished: its result text, whether it failed, and its own duration (ms).

    `files` names the images and documents the tool returned with its result
    (`neuron_turn.describe_file`), never their data: an event may be printed or
    cross a process boundary.
    """

    kind: ClassVar[str] = "tool_result"
    id: str
    name: str
    content: str
    is_error: bool
    duration: int
    files: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EffectDeclared:
    """The turn declared an effect (it is carried out by the orchestrator, later)."""

    kind: ClassVar[str] = "effect"
    effect: Effect


@dataclass(frozen=True, slots=True)
class HookHalted:
    """A hook halted the turn; `TurnDone` follows with exit `observer_halt`."""

    kind: ClassVar[str] = "hook_halted"
    reason: str


@dataclass(frozen=True, slots=True)
class LimitReached:
    """A limit ended the turn (max turns, budget, timeout, circuit breaker, stuck)."""

    kind: ClassVar[str] = "limit_reached"
    reason: ExitReason


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """A lifecycle event (context pressure, compaction, cost, budget) as the turn emits it.

    The same event the lifecycle observers get; it is also declared as a `log`
    effect (the record), so a stream shows both: the effect, then this.
    """

    kind: ClassVar[str] = "lifecycle"
    event: LifecycleEvent


@dataclass(frozen=True, slots=True)
class TurnDone:
    """The last event: the turn's output, equal to what `execute` returns."""

    kind: ClassVar[str] = "turn_done"
    output: TurnOutput


ProviderDelta: TypeAlias = TextDelta | ThinkingDelta | ToolCallStart | ToolCallDelta
"""What a streaming provider yields before its final response."""

TurnEvent: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | ToolCallStart
    | ToolCallDelta
    | OutputDelta
    | ModelCallStart
    | ModelCallDone
    | ToolStart
    | ToolProgress
    | ToolResult
    | EffectDeclared
    | HookHalted
    | LimitReached
    | Lifecycle
    | TurnDone
)
"""Every event `NeuronTurn.stream` yields."""

# Built on first use: the schemas of every effect and exit reason are a large part of import time.
_DEFERRED: Final = ConfigDict(defer_build=True)
_EFFECT: Final = TypeAdapter[Effect](Effect, config=_DEFERRED)
_EXIT: Final = TypeAdapter[ExitReason](ExitReason, config=_DEFERRED)
_LIFECYCLE: Final = TypeAdapter[LifecycleEvent](LifecycleEvent, config=_DEFERRED)
_Json: TypeAlias = dict[str, JsonValue]


def event_json(event: TurnEvent) -> dict[str, JsonValue]:
    """Return the JSON object for `event`: `{"type": kind, ...its fields}`.

    A cost is the USD amount as a string (exact, as layer0's wire writes
    money); effects, exit reasons and the output are in the layer0 wire form.
    """
    data: _Json = {"type": event.kind}
    data.update(_fields(event))
    return data


def _fields(event: TurnEvent) -> _Json:
    if isinstance(event, TextDelta | ThinkingDelta):
        return {"text": event.text}
    if isinstance(event, ToolCallStart):
        return {"id": event.id, "name": event.name}
    if isinstance(event, ToolCallDelta):
        return {"id": event.id, "arguments": event.arguments}
    if isinstance(event, OutputDelta):
        return {"value": event.data}
    if isinstance(event, ModelCallStart):
        return {"call": event.call}
    if isinstance(event, ModelCallDone):
        return _model_call(event)
    if isinstance(event, ToolStart):
        return {"id": event.id, "name": event.name, "input": event.input}
    if isinstance(event, ToolResult):
        result: dict[str, JsonValue] = {
            "id": event.id,
            "name": event.name,
            "content": event.content,
            "is_error": event.is_error,
            "duration": event.duration,
        }
        if event.files:
            result["files"] = list(event.files)
        return result
    if isinstance(event, EffectDeclared):
        return {"effect": _EFFECT.dump_python(event.effect, mode="json")}
    if isinstance(event, HookHalted):
        return {"reason": event.reason}
    if isinstance(event, LimitReached):
        return {"reason": _EXIT.dump_python(event.reason, mode="json")}
    if isinstance(event, Lifecycle):
        return {"event": _LIFECYCLE.dump_python(event.event, mode="json")}
    if isinstance(event, ToolProgress):
        return {
            "id": event.id,
            "name": event.name,
            "message": event.message,
            "fraction": event.fraction,
            "data": event.data,
        }
    return {"output": event.output.model_dump(mode="json")}


def event_from_json(data: dict[str, JsonValue]) -> TurnEvent:
    """Rebuild the event `event_json` wrote (e.g. one that crossed a process boundary).

    Raises:
        ValueError: `data` is not the JSON of an event (pydantic's errors are ValueErrors).
    """
    kind = data.get("type")
    builder = _BUILDERS.get(kind) if isinstance(kind, str) else None
    if builder is None:
        raise ValueError(f"not a turn event: type {kind!r}")
    try:
        return builder(data)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"a {kind} event without a valid {exc}") from exc
    except OverflowError as exc:  # `int(float("inf"))`: JSON's 1e999 where a count is due
        raise ValueError(f"a {kind} event with a number out of range: {exc}") from exc


def _usage(data: JsonValue) -> TokenUsage:
    if not isinstance(data, dict):
        raise TypeError("usage (an object of token counts)")
    return TokenUsage(
        int(data["input_tokens"]),  # type: ignore[arg-type]
        int(data["output_tokens"]),  # type: ignore[arg-type]
        data.get("cache_read_tokens"),  # type: ignore[arg-type]
        data.get("cache_creation_tokens"),  # type: ignore[arg-type]
    )


def _names(data: object) -> tuple[str, ...]:
    if not isinstance(data, list) or not all(isinstance(name, str) for name in data):
        raise TypeError("files (a list of strings)")
    return tuple(data)


_BUILDERS: Final[dict[str, Callable[[dict[str, Any]], TurnEvent]]] = {
    "text_delta": lambda d: TextDelta(str(d["text"])),
    "thinking_delta": lambda d: ThinkingDelta(str(d["text"])),
    "tool_call_start": lambda d: ToolCallStart(str(d["id"]), str(d["name"])),
    "tool_call_delta": lambda d: ToolCallDelta(str(d["id"]), str(d["arguments"])),
    "output_delta": lambda d: OutputDelta(d["value"], d["value"]),
    "model_call_start": lambda d: ModelCallStart(int(d["call"])),
    "model_call_done": lambda d: ModelCallDone(
        int(d["call"]),
        str(d["model"]),
        d["stop_reason"],
        _usage(d["usage"]),
        None if d["cost"] is None else usd(str(d["cost"])),
        hosted_calls=_hosted_calls(d.get("hosted_calls", [])),
    ),
    "tool_start": lambda d: ToolStart(str(d["id"]), str(d["name"]), d["input"]),
    "tool_progress": lambda d: ToolProgress(
        str(d["id"]),
        str(d["name"]),
        str(d["message"]),
        None if d.get("fraction") is None else float(d["fraction"]),
        d.get("data"),
    ),
    "tool_result": lambda d: ToolResult(
        str(d["id"]),
        str(d["name"]),
        str(d["content"]),
        bool(d["is_error"]),
        int(d["duration"]),
        _names(d.get("files", [])),
    ),
    "effect": lambda d: EffectDeclared(_EFFECT.validate_python(d["effect"])),
    "hook_halted": lambda d: HookHalted(str(d["reason"])),
    "limit_reached": lambda d: LimitReached(_EXIT.validate_python(d["reason"])),
    "lifecycle": lambda d: Lifecycle(_LIFECYCLE.validate_python(d["event"])),
    "turn_done": lambda d: TurnDone(TurnOutput.model_validate(d["output"])),
}


def _hosted_calls(data: object) -> tuple[HostedToolCall, ...]:
    if not isinstance(data, list) or not all(
        isinstance(call, dict) and isinstance(call.get("name"), str) for call in data
    ):
        raise TypeError("hosted_calls (a list of objects with a name)")
    return tuple(HostedToolCall(call["name"], call.get("input")) for call in data)


def _model_call(event: ModelCallDone) -> _Json:
    usage = event.usage
    fields: _Json = {
        "call": event.call,
        "model": event.model,
        "stop_reason": event.stop_reason,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_creation_tokens": usage.cache_creation_tokens,
        },
        "cost": None if event.cost is None else str(event.cost.amount),
    }
    if event.hosted_calls:
        fields["hosted_calls"] = [
            {"name": call.name, "input": call.input} for call in event.hosted_calls
        ]
    return fields
