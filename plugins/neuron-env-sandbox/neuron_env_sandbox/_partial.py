"""The child's partial turn, trusted only as far as the parent's own input allows.

A turn that fails in the child after its tools ran sends back what it did
and the input that continues it (`layer0.PartialTurn`). The child is the
untrusted side: code a tool ran there could write to the channel. Its
output is checked against the agent's effect policy by the orchestrator, as
any output of the child is; its continuation is checked here, against the
input the parent sent, before anything runs it: the same session, message
rule, metadata and config, with limits (its config's and its usage limits)
that may only shrink. The counts it
carries (`neuron_turn.CarriedCounts`) must parse; whatever their values, the
limits bound what the continuation may do. A
continuation that asks for more (another session, a larger budget, a wider
effect policy) is dropped, with why noted on the error, and the
orchestrator runs the turn again whole.
"""

from __future__ import annotations

from typing import Final, get_args

from moneyed import Money

from layer0 import TurnConfig, TurnError, TurnInput
from neuron_turn import (
    ContinuationError,
    UsageLimit,
    UsageLimits,
    carried_counts,
    carried_usage_limits,
    continuation_input,
)

__all__ = ["vet_partial"]

_LIMITS: Final = ("max_turns", "max_cost", "max_duration")


def vet_partial(error: TurnError, input: TurnInput, *, max_turns: int) -> None:
    """Drop `error`'s partial turn unless its continuation is one `input` allows.

    `max_turns` bounds the continuation's model calls when `input` sets none
    (the recipe's own limit).
    """
    partial = error.partial
    if partial is None:
        return
    problem = _problem(partial.continuation, input, max_turns)
    if problem is not None:
        error.partial = None
        error.add_note(f"the child's partial turn was dropped: its continuation {problem}")


def _problem(given: TurnInput, input: TurnInput, max_turns: int) -> str | None:
    """What `given` asks beyond the continuation of `input`, or None."""
    try:
        counts = carried_counts(given.metadata)
        usage = carried_usage_limits(given.metadata)
    except ContinuationError as exc:
        return f"carries counts that are not counts ({exc})"
    try:
        expected = continuation_input(input, counts, usage_left=usage)
        granted = carried_usage_limits(input.metadata)
    except ContinuationError as exc:
        return f"continues an input that cannot be continued ({exc})"
    raised = _usage_raised(granted, usage)
    if raised is not None:
        return raised
    if given.model_copy(update={"config": None}) != expected.model_copy(update={"config": None}):
        return "is not the parent's input (another session, trigger, message or metadata)"
    base = input.config or TurnConfig()
    config = given.config or TurnConfig()
    if config.model_copy(update={name: getattr(base, name) for name in _LIMITS}) != base:
        return "changes more of the config than its limits"
    bounds = {
        "max_turns": max_turns if base.max_turns is None else base.max_turns,
        "max_cost": base.max_cost,
        "max_duration": base.max_duration,
    }
    for name in _LIMITS:
        value, bound = getattr(config, name), bounds[name]
        if bound is not None and (value is None or value > bound):
            return f"raises {name} from {_shown(bound)} to {_shown(value)}"
    return None


def _usage_raised(granted: UsageLimits | None, given: UsageLimits | None) -> str | None:
    """Which usage limit the parent's input set that `given` raises or drops, if any."""
    if granted is None:
        return None
    for name in get_args(UsageLimit):
        bound: int | None = getattr(granted, name)
        value: int | None = None if given is None else getattr(given, name)
        if bound is not None and (value is None or value > bound):
            return f"raises usage limit {name} from {bound} to {_shown(value)}"
    return None


def _shown(limit: object) -> str:
    if limit is None:
        return "no limit"
    if isinstance(limit, Money):
        return f"{limit.amount} {limit.currency}"
    return str(limit)
