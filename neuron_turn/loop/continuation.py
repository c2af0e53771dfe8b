"""Continuing a turn that failed part-way, instead of running its tools again.

When a turn fails after some of its tools ran (a provider's 429 on its
third model call, a dropped connection), the loop sets the error's
`partial` (`layer0.PartialTurn`): `output` is the turn as far as it got,
ended with exit `INTERRUPTED` (its history append holds the user message,
the model's calls and their results; its effects are the ones declared so
far; its metadata what the calls cost), and `continuation` is the input
that picks up from there. An orchestrator that carries out `output` and
then runs `continuation` gets the turn in two parts: the model is called
on the stored history with no new user message, and the tools that ran do
not run again. `LocalOrchestrator` and `TemporalOrchestrator` do this
whenever they retry or fall back to the next model, and keep the partial
output of a last attempt too, so the session says which tools ran.

The continuation's config holds what the first part left of the limits
(`max_turns`, `max_cost`, `max_duration`), and a tool choice that forces a
call counts as spent, as it would be within one turn. So do the counts the
loop keeps across model calls (`CarriedCounts`): the failed calls in a row
(the circuit breaker), the identical calls in a row and the last call (the
stuck check), and the answers that failed the output type (the output
retries). A turn in two parts stops where it would have stopped in one.

The partial output keeps those counts in the session too: a `write_memory`
of the session scope's `KEPT_COUNTS_KEY`, naming the call whose result ends
the part, beside the history it appends. So a continuation marked `true`,
built later and elsewhere (`neuron-turn resume SESSION` in another process),
reads them there and counts on, as long as the history still ends where the
part left it. No tool may read or change that key, so a model cannot reset
its own circuit breaker.

A partial is offered only when a continuation can read what `output`
appends (the turn has a session and a state reader) and once a tool ran,
or was cut off by a cancellation (its result says so, as it may have had
an effect): before that, running the input again repeats nothing but a
model call.

A continuation is an input with an empty message and the metadata
`{"neuron_turn": {"continue": true}}`, or, from a partial turn, the counts
in place of `true`: `{"failures_in_a_row": 0, "identical_calls": 1,
"last_call": {"name": "send", "input": {...}}, "output_failures": 0}`
(`continuation_input` builds either). It fails before anything runs, with
`ContinuationError` (a `NonRetryableError`: the same input fails again),
when it carries a message or approval decisions, has no session, the turn
has no state reader, carries counts that are not counts, or the session's
history does not end with a user message (the results the model is to
continue from); on a session awaiting approval, with `MissingDecisionError`
naming the calls that wait.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from layer0 import (
    Content,
    CustomExit,
    NonRetryableError,
    SessionId,
    SessionScope,
    StateReader,
    TurnInput,
    WriteMemoryEffect,
)

from ._convert import is_empty
from ._output_round import CALL_OPTIONS_KEY
from ._stored_history import read_kept
from .approval import match_decisions, pending_in
from .limits import UsageLimits
from .provider import ProviderMessage, ToolResultPart

__all__ = [
    "CONTINUE_OPTION",
    "INTERRUPTED",
    "KEPT_COUNTS_KEY",
    "CarriedCounts",
    "ContinuationError",
    "carried_counts",
    "carried_usage_limits",
    "check_continuation",
    "continuation_input",
    "continues",
    "kept_counts_effect",
    "read_kept_counts",
]

# model_construct: a literal needs no validation, and validating would build the model at import.
INTERRUPTED: Final = CustomExit.model_construct(name="interrupted")
"""The exit of a partial turn's output: it failed there, and its continuation goes on."""

CONTINUE_OPTION: Final = "continue"
"""The key under `TurnInput.metadata["neuron_turn"]` that makes an input a continuation."""

KEPT_COUNTS_KEY: Final = "neuron_turn/kept_counts"
"""The session-scope key of the counts a kept partial turn left for its continuation."""

_AFTER: Final = "after"

_WHERE: Final = f"TurnInput.metadata[{CALL_OPTIONS_KEY!r}][{CONTINUE_OPTION!r}]"


_COUNTS: Final = ("failures_in_a_row", "identical_calls", "output_failures")


class ContinuationError(NonRetryableError):
    """A continuation that cannot continue anything; what is wrong is named."""


@dataclass(frozen=True, slots=True)
class CarriedCounts:
    """The counts a turn keeps across its model calls, carried into its continuation.

    Without them a retry would reset the circuit breaker, the stuck check and
    the output retries, and a model failing the same call could go on as
    many times again per retry.
    """

    failures_in_a_row: int = 0
    """Tool calls that failed in a row at the end of the part (the circuit breaker's count)."""
    identical_calls: int = 0
    """How many times in a row `last_call` was made (the stuck check's count)."""
    last_call: tuple[str, JsonValue] | None = None
    """The part's last tool call: its name and input."""
    output_failures: int = 0
    """Answers that failed the output type (the output retries spent)."""

    def as_json(self) -> dict[str, JsonValue]:
        """The counts as the continuation's mark holds them."""
        counts: dict[str, JsonValue] = {name: getattr(self, name) for name in _COUNTS}
        if self.last_call is not None:
            name, input = self.last_call
            counts["last_call"] = {"name": name, "input": input}
        return counts


def continuation_input(
    input: TurnInput,
    counts: CarriedCounts | None = None,
    *,
    usage_left: UsageLimits | None = None,
) -> TurnInput:
    """Return the input that continues the turn `input` started, once its partial is kept.

    The session, trigger, config and metadata are `input`'s; the message is
    empty, since the kept history already holds it. `counts` are the first
    part's (None: the continuation counts afresh); `usage_left`, what the first
    part left of its usage limits, replaces the input's own.

    Raises:
        ContinuationError: `input` has no session, or metadata that is not an
            object (the option has nowhere to go without dropping the caller's data).
    """
    if input.session is None:
        raise ContinuationError("a turn without a session has no history to continue")
    metadata = input.metadata
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise ContinuationError(
            f"TurnInput.metadata must be an object to mark a continuation, not {metadata!r}"
        )
    options = metadata.get(CALL_OPTIONS_KEY)
    marked: dict[str, JsonValue] = {**options} if isinstance(options, dict) else {}
    marked[CONTINUE_OPTION] = True if counts is None else counts.as_json()
    if usage_left is not None:
        marked["usage_limits"] = usage_left.to_json()
    return input.model_copy(
        update={"message": Content(""), "metadata": {**metadata, CALL_OPTIONS_KEY: marked}}
    )


def continues(metadata: JsonValue) -> bool:
    """Whether an input's metadata marks it as a continuation.

    Raises:
        ContinuationError: the mark is there but is not a boolean.
    """
    if not isinstance(metadata, dict):
        return False
    options = metadata.get(CALL_OPTIONS_KEY)
    if not isinstance(options, dict):
        return False
    mark = options.get(CONTINUE_OPTION, False)
    if mark is None or isinstance(mark, bool):
        return mark is True
    if isinstance(mark, dict):
        return True
    raise ContinuationError(f"{_WHERE} must be true, false or the counts carried, not {mark!r}")


def carried_counts(metadata: JsonValue) -> CarriedCounts | None:
    """The counts a continuation's mark carries (None for a mark of `true`: count afresh).

    Raises:
        ContinuationError: naming the count that is not one (an unknown key, a
            negative or non-integer count, a last call without a name).
    """
    options = metadata.get(CALL_OPTIONS_KEY) if isinstance(metadata, dict) else None
    mark = options.get(CONTINUE_OPTION) if isinstance(options, dict) else None
    if not isinstance(mark, dict):
        return None
    return _counts_from(mark, _WHERE)


def carried_usage_limits(metadata: JsonValue) -> UsageLimits | None:
    """The usage limits an input's metadata carries (a continuation's: what is left), if any.

    Raises:
        ContinuationError: they are not usage limits (what is wrong is named).
    """
    options = metadata.get(CALL_OPTIONS_KEY) if isinstance(metadata, dict) else None
    value = options.get("usage_limits") if isinstance(options, dict) else None
    if value is None:
        return None
    try:
        return UsageLimits.from_json(value)
    except ValueError as exc:
        raise ContinuationError(f"TurnInput.metadata[{CALL_OPTIONS_KEY!r}]: {exc}") from None


def _counts_from(mark: dict[str, JsonValue], where: str, *extra: str) -> CarriedCounts:
    """The counts `mark` (found at `where`, and allowed the keys `extra` too) holds.

    Raises:
        ContinuationError: naming the count that is not one.
    """
    unknown = sorted(set(mark) - {*_COUNTS, "last_call", *extra})
    if unknown:
        raise ContinuationError(f"{where} has unknown counts: {', '.join(unknown)}")
    values: dict[str, int] = {}
    for name in _COUNTS:
        value = mark.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ContinuationError(f"{where}[{name!r}] must be a count (0 or more), not {value!r}")
        values[name] = value
    return CarriedCounts(**values, last_call=_last_call(mark.get("last_call"), where))


def _last_call(value: JsonValue, where: str) -> tuple[str, JsonValue] | None:
    if value is None:
        return None
    if isinstance(value, dict) and set(value) == {"name", "input"}:
        name = value["name"]
        if isinstance(name, str):
            return name, value["input"]
    raise ContinuationError(
        f"{where}['last_call'] must be an object with a name and an input, not {value!r}"
    )


def kept_counts_effect(
    session: SessionId, counts: CarriedCounts, messages: Sequence[ProviderMessage]
) -> WriteMemoryEffect | None:
    """Return the effect keeping a partial turn's `counts` in `session`, beside its `messages`.

    None when `messages` (the part's, as appended) do not end with a call's
    result, which a continuation could not go on from anyway.
    """
    after = _last_result(messages)
    if after is None:
        return None
    value: dict[str, JsonValue] = {_AFTER: after, **counts.as_json()}
    return WriteMemoryEffect(scope=SessionScope(id=session), key=KEPT_COUNTS_KEY, value=value)


async def read_kept_counts(
    state: StateReader, session: SessionId, history: Sequence[ProviderMessage]
) -> CarriedCounts | None:
    """Return the counts the partial turn that `history` ends with kept (None: none kept).

    Counts kept by an earlier partial turn, whose history has grown since,
    are not this continuation's: None.

    Raises:
        ContinuationError: what is kept is not counts (another program wrote it).
        NonRetryableError: the store judged the read.
        RetryableError: the store failed otherwise.
    """
    kept = await read_kept(state, session, KEPT_COUNTS_KEY, "the counts of a kept partial turn")
    if kept is None:
        return None
    where = f"the kept counts of session {session!r} (key {KEPT_COUNTS_KEY!r})"
    if not isinstance(kept, dict) or not isinstance(kept.get(_AFTER), str):
        raise ContinuationError(
            f"{where} must be an object naming the call it follows ({_AFTER!r}), not {kept!r}"
        )
    counts = _counts_from(kept, where, _AFTER)
    return counts if kept[_AFTER] == _last_result(history) else None


def _last_result(messages: Sequence[ProviderMessage]) -> str | None:
    """The id of the call whose result ends `messages`, if they end with one."""
    if not messages or messages[-1].role != "user":
        return None
    results = [part for part in messages[-1].content if isinstance(part, ToolResultPart)]
    return results[-1].tool_use_id if results else None


def check_continuation(
    input: TurnInput, history: Sequence[ProviderMessage], *, has_state: bool
) -> None:
    """Refuse a continuation that has nothing to continue, before anything runs.

    Raises:
        ContinuationError: naming the first thing that is wrong.
        MissingDecisionError: the session awaits approval; its pending calls need
            decisions, not a continuation.
    """
    session = input.session
    if session is None:
        raise ContinuationError("a continuation needs the session whose turn it continues")
    pending = pending_in(history)
    if pending:
        match_decisions(pending, (), session)  # names the calls waiting for a decision
    if not has_state:
        raise ContinuationError(
            f"a continuation of session {session!r} reads its history, and this turn has no "
            "state reader"
        )
    if not is_empty(input.message):
        raise ContinuationError(
            "a continuation carries no message (the history holds it); send it empty"
        )
    if not history or history[-1].role != "user":
        last = "no history" if not history else f"a last message from {history[-1].role!r}"
        raise ContinuationError(
            f"session {session!r} has {last}: a continuation goes on from the results of "
            "the calls a kept partial turn made, which end with the user's side"
        )
