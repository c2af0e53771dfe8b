"""Output validators: checks of the final answer that send it back to the model, as pydantic-ai's.

An output validator is an async function of (run context, answer) that
returns the answer, changed or not, or raises `neuron_tool.ModelRetry` with
a hint to send it back. The answer is the output type's value for a typed
turn (already valid for the type), else the answer's text. Validators run in
the order given, each on what the one before returned, once the answer is
final and before the output guardrails.

Why beside guardrails: a guardrail stops the turn; a validator asks the
model to do better (a query that must be read-only, a date that must be in
the future), which no JSON Schema can say. A sent-back answer counts against
`output_retries` as an answer that does not match the output type does: the
model reads the hint (as the final-answer call's error result in tool mode,
else as a message) and answers again; once the retries are spent the turn
ends `{"custom": "output_invalid"}`. The session keeps the answer sent back
and the hint, so the model's next turn knows what was refused.

A streamed answer's text has reached the reader before the validators see
it, as for output guardrails: where a validator changes or sends back
answers, show the turn's output rather than its text deltas. Plugins offer
validators with the hook `register_output_validators`; every turn built
from plugins runs them after its config's.

A validator that raises anything else fails the turn rather than let an
unchecked answer through: a layer0 `TurnError` as raised, anything else as
`OutputValidatorError` naming it; so does one returning a value that is not
of the output type (or, for a text turn, not text).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, overload

from layer0 import NonRetryableError, TurnError
from neuron_tool import ModelRetry, RunContext

from .output import OutputSpec, OutputValidationError

__all__ = ["OutputValidator", "OutputValidatorError", "SentBack", "output_validator", "validated"]

ValidatorCheck: TypeAlias = Callable[[RunContext[Any], Any], Awaitable[Any]]
"""An output validator's check: the run and the answer; the answer back, changed or not."""


@dataclass(frozen=True, slots=True)
class OutputValidator:
    """A check of the turn's final answer that may send it back to the model with a hint."""

    check: ValidatorCheck
    name: str


class OutputValidatorError(NonRetryableError):
    """An output validator raised, or returned what is not an answer: the turn stops."""


@overload
def output_validator(check: ValidatorCheck, /) -> OutputValidator: ...
@overload
def output_validator(*, name: str) -> Callable[[ValidatorCheck], OutputValidator]: ...
def output_validator(
    check: ValidatorCheck | None = None, /, *, name: str | None = None
) -> OutputValidator | Callable[[ValidatorCheck], OutputValidator]:
    """Make an async function of (run context, answer) an output validator, named for it.

    Raises:
        TypeError: `check` is not an async function (the turn awaits it).
    """

    def made(check: ValidatorCheck) -> OutputValidator:
        if not inspect.iscoroutinefunction(check):
            raise TypeError(f"an output validator must be an async function, not {check!r}")
        return OutputValidator(check, name or check.__name__)

    return made if check is None else made(check)


@dataclass(frozen=True, slots=True)
class SentBack:
    """A validator's `ModelRetry`: the answer goes back to the model with `hint`."""

    validator: str
    hint: str


async def validated(
    validators: Sequence[OutputValidator],
    context: RunContext[Any],
    answer: Any,
    spec: OutputSpec[Any] | None,
) -> Any:
    """Run `validators` in order on `answer`; what the last returned, or `SentBack`.

    `spec` is the turn's output type (None: a text turn, whose answer is text).

    Raises:
        TurnError: as a validator raised it.
        OutputValidatorError: a validator raised anything else, or returned what is
            not of the output type.
    """
    for validator in validators:
        try:
            answer = await validator.check(context, answer)
        except ModelRetry as retry:
            return SentBack(validator.name, retry.hint)
        except TurnError:
            raise
        except Exception as exc:
            raise OutputValidatorError(
                f"output validator {validator.name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        answer = _of_the_type(validator.name, answer, spec)
    return answer


def _of_the_type(name: str, value: Any, spec: OutputSpec[Any] | None) -> Any:
    """`value` as the output type, or the error naming validator `name` that returned it."""
    if spec is None:
        if isinstance(value, str):
            return value
        raise OutputValidatorError(
            f"output validator {name!r} returned {type(value).__name__}; on a text turn "
            "a validator returns the answer's text, changed or not"
        )
    try:
        return spec.validate_value(value)
    except OutputValidationError as exc:
        raise OutputValidatorError(
            f"output validator {name!r} returned what is not {spec.name} ({exc}); "
            "a validator returns the answer, changed or not"
        ) from exc
