"""`FallbackTurn`: one agent, several models tried in order.

Give `LocalOrchestrator` a `FallbackTurn` as an agent and each of its
models is tried in turn: a model whose turn raises `RetryableError` is
retried within the orchestrator's `RetryPolicy`; one that fails in a way a
retry does not fix (`NonRetryableError`: a bad key, an unknown model;
`ModelError`), or whose retries run out, gives way to the next. Any other
error (a tool's, the history's) is the agent's, not the model's, and fails
the dispatch at once.

The output records who answered and what failed before, as a `log`
effect placed first among the turn's effects (`ATTEMPTS_LOG` in its data);
layer0's `TurnMetadata` has no field for it. Executed outside an
orchestrator, a `FallbackTurn` tries each model once.

A failed attempt whose tools ran says so (`layer0.TurnError.partial`, which
NeuronTurn sets): before the next try of the same model or the next
model, the orchestrator carries out what it did as a turn that ended there
(`keep`), and the next attempt continues from it, so those tools do not
run again. An attempt that offers no partial (no tool ran, no session to
keep it in, another Turn) is run again whole: its tools, if any, run again,
while its effects never took place (they are carried out only for a turn
that completes or is kept). A model's turn that does not read
continuations (`layer0.continues_partial_turns`) is given the dispatch's
input again, after the part is kept all the same: it reads the session,
and would not otherwise know those tools ran.

Executed on its own (no orchestrator to keep a part), a chain stops at an
attempt whose tools ran and raises its error, partial and all, for the
caller to keep and then run the partial's continuation (or, when a model
of the chain reads none, the input again); trying the next model there
would run those tools again and lose them from the history.
`untried_models(error)` names the models it did not try, so a caller
knows that the chain may go on even when that model's error is not one a
retry fixes.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from pydantic import JsonValue

from layer0 import (
    LogEffect,
    LogLevel,
    ModelError,
    NonRetryableError,
    PartialTurn,
    RetryableError,
    Turn,
    TurnError,
    TurnInput,
    TurnOutput,
    continues_partial_turns,
    partial_of,
)

from .retry import Clock, RetryPolicy, SystemClock

__all__ = ["ATTEMPTS_LOG", "Attempt", "FallbackTurn", "Keep", "run_attempts", "untried_models"]

ATTEMPTS_LOG: Final = "attempts"
"""The key of the attempts record in the `log` effect's data: `{"attempts": {...}}`."""

_MODEL_ERRORS: Final = (RetryableError, NonRetryableError, ModelError)
"""Errors that are the model's (its provider's): the next model may do better."""

_NOT_KEPT: Final = (
    "what it did was not kept (a part that declares a handoff, which only a finished turn"
    " may, is not), so nothing goes on from it: its tools' calls are not in the session"
)

_UNTRIED: Final = "_neuron_untried_models"
"""The attribute on a chain's error that names the models it did not try."""

RunOne = Callable[[Turn, TurnInput], Awaitable[TurnOutput]]
"""Runs one attempt of one candidate turn (plainly, or streamed)."""

Keep = Callable[[TurnOutput, BaseException], Awaitable[bool]]
"""Carries out a failed or cancelled attempt's partial output (with the error or the
cancellation that ended it) as a turn; returns whether it did (False: the partial is not
one to keep, the turn runs again whole)."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One failed attempt: which model, which try, what it raised."""

    model: str
    attempt: int
    """1 for a model's first try."""
    error: str
    """The layer0 error class's name."""
    message: str
    waited: float | None = None
    """Seconds waited before the next try of the same model (None: none followed)."""
    kept: bool = False
    """Whether what it did (its tools' calls and results) was kept in the session."""

    def as_json(self) -> dict[str, JsonValue]:
        """The attempt as the attempts record lists it."""
        return {
            "model": self.model,
            "attempt": self.attempt,
            "error": self.error,
            "message": self.message,
            "waited": self.waited,
            "kept": self.kept,
        }

    def __str__(self) -> str:
        kept = " (what it did was kept)" if self.kept else ""
        return f"{self.model} try {self.attempt}: {self.error}: {self.message}{kept}"


class FallbackTurn:
    """A `layer0.Turn` over several models' turns, each tried when the one before fails."""

    def __init__(self, models: Mapping[str, Turn]) -> None:
        """Try `models` in order; each key names its model (`"openai:gpt-4o-mini"`) in records.

        Raises:
            ValueError: no model given.
            TypeError: a value is not a `layer0.Turn`.
        """
        if not models:
            raise ValueError("a FallbackTurn needs at least one model")
        for name, turn in models.items():
            if not isinstance(turn, Turn):
                raise TypeError(f"model {name!r} is not a layer0.Turn (no async execute): {turn!r}")
        self.models: tuple[tuple[str, Turn], ...] = tuple(models.items())
        """The models' names and turns, in the order they are tried."""
        self.continues_partial_turns = all(continues_partial_turns(turn) for _, turn in self.models)
        """Whether every model's turn reads continuations, as then the chain does."""

    def __repr__(self) -> str:
        return f"FallbackTurn(models={[name for name, _ in self.models]!r})"

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Run the models in order, once each, until one completes; see the module doc."""
        return await run_attempts(
            self.models,
            input,
            policy=RetryPolicy(max_attempts=1),
            clock=SystemClock(),
            randomness=random.random,
            record=True,
        )


async def run_attempts(
    candidates: Sequence[tuple[str, Turn]],
    input: TurnInput,
    *,
    policy: RetryPolicy,
    clock: Clock,
    randomness: Callable[[], float],
    record: bool,
    run: RunOne | None = None,
    keep: Keep | None = None,
) -> TurnOutput:
    """Run `input` on the first candidate that completes, retrying each within `policy`.

    `record` adds the attempts record to the output even when nothing
    failed (a fallback chain says who answered); it is added whenever
    something failed. `run` runs one attempt (default: `turn.execute`).
    `keep` carries out a failed attempt's partial turn before another
    attempt follows, which then runs the partial's continuation instead of
    `input` (None: every attempt runs `input` whole); and the partial of the
    attempt whose error ends the run, so the session holds what its tools did.

    Raises:
        The last candidate's error, when every candidate failed; its notes
        list every failed attempt. An error that is not the model's, at once,
        and so is an error of `keep` before another attempt. Without `keep`,
        the error of an attempt whose tools ran: the caller keeps its partial
        and goes on from it.
    """
    reads = all(continues_partial_turns(turn) for _, turn in candidates)
    attempts = _Attempts(
        policy, clock, randomness, run or _execute, clock.now(), input, keep, reads
    )
    last: TurnError | None = None
    for index, (name, turn) in enumerate(candidates):
        try:
            output = await attempts.retrying(name, turn)
        except _MODEL_ERRORS as exc:
            last = exc
            following = candidates[index + 1 :]
            if not following:
                break
            if attempts.stops_at(exc):
                names = tuple(name for name, _ in following)
                setattr(exc, _UNTRIED, names)
                exc.add_note(_not_tried(names, reads=reads))
                break
            await attempts.continue_after(exc)
            continue
        except TurnError as exc:
            await attempts.keep_last(exc, listed=False)
            raise
        except asyncio.CancelledError as cancelled:
            await attempts.keep_cancelled(cancelled)
            raise
        if record or attempts.failed:
            output = _recorded(output, name, attempts.failed)
        return output
    assert last is not None
    await attempts.keep_last(last, listed=True)
    if len(attempts.failed) > 1:
        last.add_note("attempts: " + "; ".join(str(a) for a in attempts.failed))
    raise last


def untried_models(error: BaseException) -> tuple[str, ...]:
    """The models a chain run on its own did not try, having stopped at `error`.

    Empty unless the chain stopped at a model whose tools ran (see the module
    doc): once its part is kept, what runs next on the chain (the partial's
    continuation, or the input again) may go on down it.
    """
    names = getattr(error, _UNTRIED, ())
    return names if isinstance(names, tuple) else ()


async def _execute(turn: Turn, input: TurnInput) -> TurnOutput:
    return await turn.execute(input)


@dataclass(slots=True)
class _Attempts:
    """The tries of one dispatch's turn, across its candidates."""

    policy: RetryPolicy
    clock: Clock
    randomness: Callable[[], float]
    run: RunOne
    started: float
    original: TurnInput
    """The dispatch's input."""
    keep: Keep | None
    reads: bool
    """Whether every candidate reads continuations (else the agent runs its input again)."""
    input: TurnInput = field(init=False)
    """What the next attempt runs: `original`, or the last kept partial's continuation."""
    kept: PartialTurn | None = None
    """The part an earlier attempt left that was kept last, if any."""
    failed: list[Attempt] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.input = self.original

    async def retrying(self, name: str, turn: Turn) -> TurnOutput:
        """Run `turn` until it completes, fails for good, or the policy allows no more tries."""
        number = 0
        while True:
            number += 1
            try:
                return await self.run(turn, self._input_for(turn))
            except RetryableError as exc:
                wait = None if self.stops_at(exc) else self._wait(number, exc)
                self.failed.append(_attempt(name, number, exc, wait))
                if wait is None:
                    raise
                await self.continue_after(exc)
                await self.clock.sleep(wait)
            except (NonRetryableError, ModelError) as exc:
                self.failed.append(_attempt(name, number, exc, None))
                raise

    def stops_at(self, error: TurnError) -> bool:
        """Whether `error` ends the run here: its tools ran, and only the caller can keep them.

        So without `keep`: another attempt would run those tools again.
        """
        return error.partial is not None and self.keep is None

    async def continue_after(self, error: TurnError) -> None:
        """Before another attempt: keep what the failed one did, and continue from there.

        Nothing to do when the error offers no partial turn or there is no `keep`.
        The next attempt gets the continuation if its turn reads continuations,
        the dispatch's input otherwise (`_input_for`).
        """
        partial = error.partial
        if partial is None or self.keep is None:
            return
        if await self.keep(partial.output, error):
            self.input, self.kept = partial.continuation, partial
            self.failed[-1] = replace(self.failed[-1], kept=True)

    async def keep_last(self, error: TurnError, *, listed: bool) -> None:
        """Keep what the attempt whose `error` ends the run did, if it says (and `keep` is set).

        The tools it ran did run: the session records them, and a later dispatch of
        `error.partial.continuation` goes on from there. A failure to keep it is noted
        on `error`, which stays the one raised; a part `keep` refuses is dropped from
        it, as nothing could go on from it. An attempt that ran no tool after an
        earlier one's part was kept hands on that part, which is where a later
        dispatch goes on. `listed`: the attempt is the last of `failed` (a model's
        error; any other is raised at once, unlisted).
        """
        partial = error.partial
        if partial is None and self.kept is not None:
            error.partial = self._going_on(self.kept)
            return
        if partial is None or self.keep is None:
            return
        try:
            kept = await self.keep(partial.output, error)
        except Exception as exc:
            error.add_note(f"what it did could not be kept: {type(exc).__name__}: {exc}")
            return
        if not kept:
            error.partial = None
            error.add_note(_NOT_KEPT)
            return
        error.partial = self._going_on(partial)
        if listed:
            self.failed[-1] = replace(self.failed[-1], kept=True)

    async def keep_cancelled(self, cancelled: asyncio.CancelledError) -> None:
        """Keep what a cancelled attempt did, if it says (`layer0.partial_of`).

        Its tools did run: the session records them, as for a failed attempt.
        Kept shielded from the cancellation under way; a failure to keep it is
        noted on `cancelled`, which goes on, and a part `keep` refuses is dropped.
        Cancelled with nothing of its own (waiting to retry, or before a tool
        ran) after an earlier attempt's part was kept, it hands on that part.
        """
        partial = partial_of(cancelled)
        if partial is None and self.kept is not None:
            cancelled.partial = self._going_on(self.kept)  # type: ignore[attr-defined]
            return
        if partial is None or self.keep is None:
            return
        try:
            kept = await asyncio.shield(self.keep(partial.output, cancelled))
        except Exception as exc:
            cancelled.add_note(f"what it did could not be kept: {type(exc).__name__}: {exc}")
            return
        if not kept:
            cancelled.add_note(_NOT_KEPT)
        cancelled.partial = self._going_on(partial) if kept else None  # type: ignore[attr-defined]

    def _going_on(self, partial: PartialTurn) -> PartialTurn:
        """`partial` as the run hands it on, kept: with what a later dispatch runs next.

        Its continuation for an agent whose every candidate reads continuations;
        else the dispatch's input again, which each candidate can take.
        """
        return partial if self.reads else replace(partial, continuation=self.original)

    def _input_for(self, turn: Turn) -> TurnInput:
        """The continuation, for a turn that reads one; the dispatch's input otherwise."""
        return self.input if continues_partial_turns(turn) else self.original

    def _wait(self, number: int, error: RetryableError) -> float | None:
        """Seconds to wait before the next try, or None when the policy allows no more."""
        elapsed = self.clock.now() - self.started
        return self.policy.next_wait(number, error.retry_after, self.randomness(), elapsed)


def _not_tried(names: Sequence[str], *, reads: bool) -> str:
    """The note on a chain's error naming the models not tried, and what to run next."""
    then = "`partial.continuation`" if reads else "the input again (a model reads no continuation)"
    return (
        f"not tried: {', '.join(names)}: the failed attempt's tools ran, and another model"
        f" run here would run them again; keep its partial (`partial.output`), then run {then}"
    )


def _attempt(name: str, number: int, exc: Exception, waited: float | None) -> Attempt:
    return Attempt(
        model=name, attempt=number, error=type(exc).__name__, message=str(exc), waited=waited
    )


def _recorded(output: TurnOutput, name: str, attempts: Sequence[Attempt]) -> TurnOutput:
    """`output` with the attempts record as its first effect."""
    if attempts:
        message = f"answered by {name} after {len(attempts)} failed attempt(s): " + "; ".join(
            str(a) for a in attempts
        )
    else:
        message = f"answered by {name}"
    data: dict[str, JsonValue] = {
        ATTEMPTS_LOG: {"answered_by": name, "failures": [a.as_json() for a in attempts]}
    }
    level = LogLevel.WARN if attempts else LogLevel.INFO
    record = LogEffect(level=level, message=message, data=data)
    return output.model_copy(update={"effects": [record, *output.effects]})
