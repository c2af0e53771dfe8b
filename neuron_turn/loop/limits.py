"""Turn limits: max turns, max cost and max duration, then the usage limits.

`UsageLimits` bounds what a turn may use besides model calls, money and time:
the tool calls it runs and the tokens it spends, as pydantic-ai's `UsageLimits`.
Why: a model is untrusted input, and one answer may ask for hundreds of calls
at once; a local model has no price, so `max_cost` cannot bound its tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Final, Literal, get_args

from moneyed import Money
from pydantic import JsonValue

from layer0 import ExitReason, LogEffect, LogLevel, TurnOutput

__all__ = ["LimitCrossed", "UsageLimit", "UsageLimits", "limit_crossed", "limit_reached"]

UsageLimit = Literal["tool_calls", "input_tokens", "output_tokens", "total_tokens"]
"""The name of one usage limit (a field of `UsageLimits`)."""

_WHAT: Final[dict[str, str]] = {
    "tool_calls": "tool calls",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "total_tokens": "tokens in all",
}


def limit_reached(
    *,
    turns_used: int,
    max_turns: int,
    cost: Money,
    max_cost: Money | None,
    elapsed_ms: int,
    max_duration: int | None,
) -> ExitReason | None:
    """Return the exit reason of the first limit reached, or None while all hold."""
    if turns_used >= max_turns:
        return "max_turns"
    if max_cost is not None and cost >= max_cost:
        return "budget_exhausted"
    if max_duration is not None and elapsed_ms >= max_duration:
        return "timeout"
    return None


@dataclass(frozen=True, slots=True)
class LimitCrossed:
    """A usage limit that stopped a turn: which, what it allows and what was used or asked."""

    limit: UsageLimit
    allowed: int
    used: int

    def message(self) -> str:
        """Say which limit stopped the turn, for the turn's log and the command line."""
        what = _WHAT[self.limit]
        if self.limit == "tool_calls":
            return (
                f"Stopped at the turn's limit of {self.allowed:,} {what}: "
                f"the model asked for {self.used:,} in all, none of its last calls ran"
            )
        return f"Stopped at the turn's limit of {self.allowed:,} {what} ({self.used:,} used)"

    def log(self) -> LogEffect:
        """The `log` effect (warn) the turn declares when this limit stops it."""
        record: dict[str, JsonValue] = {
            "limit": self.limit,
            "allowed": self.allowed,
            "used": self.used,
        }
        return LogEffect(level=LogLevel.WARN, message=self.message(), data={"usage_limit": record})


@dataclass(frozen=True, slots=True)
class UsageLimits:
    """Most tool calls and tokens one turn may use; None leaves that one unbounded.

    Tool calls are counted as the model asks for them, before any runs: an
    answer asking for more than are left runs none of them (each is answered
    unrun, saying why) and the turn ends `budget_exhausted`. Tokens are the
    turn's own (its model calls and any summary a context strategy asks for),
    checked after each model call with the other limits, so a turn may go over
    by one call's tokens, as over `max_cost` by one call's cost. What an agent
    the turn delegated to spent and answered back with counts as the turn's
    (as for `max_cost`); its own tool calls are its own, the `delegate` call
    one of the turn's. A resume runs the calls a person decided without
    counting them again: the turn that asked for them did.
    """

    tool_calls: int | None = None
    """Most tool calls the turn runs (effect, memory and `delegate` calls too)."""
    input_tokens: int | None = None
    """Most input tokens the turn's model calls take, summed."""
    output_tokens: int | None = None
    """Most output tokens the turn's model calls give, summed."""
    total_tokens: int | None = None
    """Most input and output tokens together."""

    def __post_init__(self) -> None:
        """Refuse a limit that is not a whole number of 0 or more.

        Raises:
            ValueError: naming the limit and its value.
        """
        for name in _NAMES:
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 0):
                raise ValueError(
                    f"usage limit {name} must be a whole number 0 or more, not {value!r}"
                )

    def __bool__(self) -> bool:
        """Whether any limit is set."""
        return any(getattr(self, name) is not None for name in _NAMES)

    def over(self, defaults: UsageLimits | None) -> UsageLimits:
        """These limits where set, `defaults`' elsewhere."""
        if defaults is None:
            return self
        return UsageLimits(
            *(_first(getattr(self, name), getattr(defaults, name)) for name in _NAMES)
        )

    def tokens_crossed(self, tokens_in: int, tokens_out: int) -> LimitCrossed | None:
        """The first token limit `tokens_in` and `tokens_out` reach, if any."""
        spent: tuple[tuple[UsageLimit, int | None, int], ...] = (
            ("input_tokens", self.input_tokens, tokens_in),
            ("output_tokens", self.output_tokens, tokens_out),
            ("total_tokens", self.total_tokens, tokens_in + tokens_out),
        )
        for limit, allowed, used in spent:
            if allowed is not None and used >= allowed:
                return LimitCrossed(limit, allowed, used)
        return None

    def calls_crossed(self, made: int, asked: int) -> LimitCrossed | None:
        """The tool-call limit, when `asked` more calls after `made` would go past it."""
        allowed = self.tool_calls
        if allowed is None or made + asked <= allowed:
            return None
        return LimitCrossed("tool_calls", allowed, made + asked)

    def left(self, tool_calls: int, tokens_in: int, tokens_out: int) -> UsageLimits:
        """What is left of these limits after a part of a turn used this much."""
        used = {
            "tool_calls": tool_calls,
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        }
        return UsageLimits(
            *(
                None if (allowed := getattr(self, name)) is None else max(allowed - used[name], 0)
                for name in _NAMES
            )
        )

    def to_json(self) -> dict[str, JsonValue]:
        """The limits that are set, as `TurnInput.metadata` carries them."""
        return {name: value for name in _NAMES if (value := getattr(self, name)) is not None}

    @classmethod
    def from_json(cls, value: JsonValue) -> UsageLimits:
        """Read limits as `to_json` writes them.

        Raises:
            ValueError: `value` is not an object of known limits, each a whole number 0 or more.
        """
        if not isinstance(value, dict):
            raise ValueError(f"usage_limits must be an object, not {value!r}")
        unknown = sorted(set(value) - set(_NAMES))
        if unknown:
            raise ValueError(f"usage_limits has unknown keys {unknown}; known: {list(_NAMES)}")
        return cls(**value)  # type: ignore[arg-type]  # each checked in __post_init__


_NAMES: Final = tuple(f.name for f in fields(UsageLimits))


def limit_crossed(output: TurnOutput) -> LimitCrossed | None:
    """The usage limit that stopped a turn, read from the log it declared; None if none did.

    Why: `budget_exhausted` alone does not say which budget ran out.
    """
    for effect in output.effects:
        data = effect.data if isinstance(effect, LogEffect) else None
        record = data.get("usage_limit") if isinstance(data, dict) else None
        if not isinstance(record, dict):
            continue
        limit, allowed, used = record.get("limit"), record.get("allowed"), record.get("used")
        for name in _LIMITS:
            if limit == name and isinstance(allowed, int) and isinstance(used, int):
                return LimitCrossed(name, allowed, used)
    return None


_LIMITS: Final[tuple[UsageLimit, ...]] = get_args(UsageLimit)


def _first(value: int | None, default: int | None) -> int | None:
    return default if value is None else value
