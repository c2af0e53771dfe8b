"""Guardrails: checks of a turn's message and final answer that stop it, as the OpenAI SDK's.

An input guardrail checks the user's message. It runs beside the turn's first
model call, so a check that passes adds no wait; yet nothing acts on that
call's answer before every input guardrail has passed: no tool runs, no
effect is declared, and a streamed turn's reader sees none of its text (held,
then passed on). One that trips cancels the call if it is still running. A
turn that carries no new message (a resume with decisions, a continuation)
was checked when its message came.

An output guardrail checks the final answer before the turn returns it: the
value of the output type for a typed turn, else the answer's text. It runs
once the answer is final (validated, past the hooks), beside the other output
guardrails. A streamed answer's text has reached the reader by then: to keep
a tripped answer from a reader, show the output rather than the deltas.

A check returns None to pass or a `Tripwire` to stop the turn, whose first
trip wins (the other checks are cancelled). The turn then ends with the exit
`{"custom": "guardrail_tripped"}` (`GUARDRAIL_TRIPPED`), its message saying
which guardrail tripped and why, and a `log` effect (level `warn`) recording
`{"guardrail": {"name", "stage", "reason", "info"}}`. Its history keeps the
user's message and what its tools did, with that message as the model's
answer in place of the one withheld: the session never holds what a
guardrail stopped, and the model reads next time that it was stopped.

A check that raises fails the turn rather than let unchecked input or output
through: a layer0 `TurnError` as raised (a check that calls a model may be
rate limited, and the orchestrator retries it), anything else as
`GuardrailError`, naming the guardrail.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, TypeVar, overload

from pydantic import JsonValue

from layer0 import Content, CustomExit, LogEffect, LogLevel, NonRetryableError, TurnError
from neuron_tool import RunContext

__all__ = [
    "GUARDRAIL_TRIPPED",
    "GuardrailError",
    "InputGuardrail",
    "OutputGuardrail",
    "Tripped",
    "Tripwire",
    "first_trip",
    "input_guardrail",
    "output_guardrail",
]

# model_construct: a literal needs no validation, and validating would build the model at import.
GUARDRAIL_TRIPPED: Final = CustomExit.model_construct(name="guardrail_tripped")
"""The exit of a turn a guardrail stopped."""

Stage: TypeAlias = Literal["input", "output"]
C = TypeVar("C", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class Tripwire:
    """What a guardrail returns to stop the turn: why, and anything else worth recording."""

    reason: str
    """Why, in a sentence: the turn's message and its log say it."""
    info: JsonValue = None
    """Anything else the log effect should carry (a classifier's scores, say)."""


InputCheck: TypeAlias = Callable[[RunContext[Any], Content], Awaitable[Tripwire | None]]
"""An input guardrail's check: the run and the user's message; a `Tripwire` to stop."""
OutputCheck: TypeAlias = Callable[[RunContext[Any], Any], Awaitable[Tripwire | None]]
"""An output guardrail's check: the run and the final answer (typed value or text)."""


@dataclass(frozen=True, slots=True)
class InputGuardrail:
    """A check of the user's message, run beside the turn's first model call."""

    check: InputCheck
    name: str


@dataclass(frozen=True, slots=True)
class OutputGuardrail:
    """A check of the turn's final answer, before the turn returns it."""

    check: OutputCheck
    name: str


class GuardrailError(NonRetryableError):
    """A guardrail's check raised: the turn stops rather than go on unchecked."""


@overload
def input_guardrail(check: InputCheck, /) -> InputGuardrail: ...
@overload
def input_guardrail(*, name: str) -> Callable[[InputCheck], InputGuardrail]: ...
def input_guardrail(
    check: InputCheck | None = None, /, *, name: str | None = None
) -> InputGuardrail | Callable[[InputCheck], InputGuardrail]:
    """Make an async function of (run context, message) an input guardrail, named for it."""

    def made(check: InputCheck) -> InputGuardrail:
        return InputGuardrail(_async(check), name or check.__name__)

    return made if check is None else made(check)


@overload
def output_guardrail(check: OutputCheck, /) -> OutputGuardrail: ...
@overload
def output_guardrail(*, name: str) -> Callable[[OutputCheck], OutputGuardrail]: ...
def output_guardrail(
    check: OutputCheck | None = None, /, *, name: str | None = None
) -> OutputGuardrail | Callable[[OutputCheck], OutputGuardrail]:
    """Make an async function of (run context, answer) an output guardrail, named for it."""

    def made(check: OutputCheck) -> OutputGuardrail:
        return OutputGuardrail(_async(check), name or check.__name__)

    return made if check is None else made(check)


def _async(check: C) -> C:
    """`check`, refused unless it is an async function (the turn awaits it beside others).

    Raises:
        TypeError: naming it.
    """
    if not inspect.iscoroutinefunction(check):
        raise TypeError(f"a guardrail's check must be an async function, not {check!r}")
    return check


@dataclass(frozen=True, slots=True)
class Tripped:
    """A guardrail that tripped: which, at which stage, and its tripwire."""

    name: str
    stage: Stage
    tripwire: Tripwire

    def message(self) -> str:
        """The turn's message in place of the answer: what stopped it and why."""
        what = "message" if self.stage == "input" else "answer"
        return f"Stopped by guardrail {self.name!r} on the {what}: {self.tripwire.reason}"

    def log(self) -> LogEffect:
        """The log effect recording the trip."""
        record: dict[str, JsonValue] = {
            "name": self.name,
            "stage": self.stage,
            "reason": self.tripwire.reason,
            "info": self.tripwire.info,
        }
        return LogEffect(level=LogLevel.WARN, message=self.message(), data={"guardrail": record})


async def first_trip(
    checks: Sequence[tuple[str, Awaitable[Tripwire | None]]], stage: Stage
) -> Tripped | None:
    """Run `checks` (name, coroutine) at once; the first to trip, the others cancelled.

    Raises:
        TurnError: as a check raised it.
        GuardrailError: a check raised anything else, or returned what is not a Tripwire.
    """
    tasks = {asyncio.ensure_future(check): name for name, check in checks}
    try:
        pending = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                tripwire = _verdict(tasks[task], task)
                if tripwire is not None:
                    return Tripped(tasks[task], stage, tripwire)
        return None
    finally:
        for task in tasks:
            task.cancel()
        # Cancelled checks end here, so none outlives the turn.
        await asyncio.gather(*tasks, return_exceptions=True)


def _verdict(name: str, task: asyncio.Future[Tripwire | None]) -> Tripwire | None:
    try:
        verdict = task.result()
    except TurnError:
        raise
    except Exception as exc:
        raise GuardrailError(f"guardrail {name!r} failed: {type(exc).__name__}: {exc}") from exc
    if verdict is not None and not isinstance(verdict, Tripwire):
        raise GuardrailError(
            f"guardrail {name!r} returned {type(verdict).__name__}; a check returns None to "
            "pass or a Tripwire to stop the turn"
        )
    return verdict
