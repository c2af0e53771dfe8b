"""`BudgetHook`: halt the turn once its cost or token use passes a limit."""

from __future__ import annotations

from collections.abc import Set
from decimal import Decimal
from typing import Final

from moneyed import Money
from pydantic_core import PydanticCustomError

from layer0 import Halt, HookAction, HookContext, HookPoint
from layer0.money import parse_cost

from .errors import HookConfigError
from .registry import CONTINUE

__all__ = ["BudgetHook"]

_POINTS: Final = frozenset({HookPoint.POST_INFERENCE, HookPoint.EXIT_CHECK})


class BudgetHook:
    """Halts at `post_inference` or `exit_check` when cost or tokens exceed a limit.

    Costs are compared as exact decimals, never floats. Reaching a limit
    exactly is allowed; only going past it halts.
    """

    def __init__(
        self, *, max_cost: Money | Decimal | str | None = None, max_tokens: int | None = None
    ) -> None:
        """Set the limits; give at least one.

        Raises:
            HookConfigError: no limit, a negative limit, or a cost that is not
                a USD amount.
        """
        if max_cost is None and max_tokens is None:
            raise HookConfigError("BudgetHook needs max_cost, max_tokens or both")
        self.max_cost: Decimal | None = None if max_cost is None else _read_cost(max_cost)
        self.max_tokens: int | None = None if max_tokens is None else _read_tokens(max_tokens)

    @property
    def points(self) -> Set[HookPoint]:
        """`post_inference` and `exit_check`, where the totals have just changed."""
        return _POINTS

    async def on_event(self, ctx: HookContext) -> HookAction:
        """Halt, naming every limit passed and by how much, or continue."""
        reasons = [*self._cost_overrun(ctx), *self._token_overrun(ctx)]
        return Halt(reason="; ".join(reasons)) if reasons else CONTINUE

    def _cost_overrun(self, ctx: HookContext) -> list[str]:
        if self.max_cost is None or ctx.cost.amount <= self.max_cost:
            return []
        spent, budget = _same_scale(ctx.cost.amount, self.max_cost)
        return [f"cost ${spent} exceeds budget ${budget}"]

    def _token_overrun(self, ctx: HookContext) -> list[str]:
        if self.max_tokens is None or ctx.tokens_used <= self.max_tokens:
            return []
        return [f"tokens used {ctx.tokens_used} exceed budget {self.max_tokens}"]

    def __repr__(self) -> str:
        return f"BudgetHook(max_cost={self.max_cost!r}, max_tokens={self.max_tokens!r})"


def _read_cost(value: Money | Decimal | str) -> Decimal:
    try:
        amount: Decimal = parse_cost(value).amount
    except PydanticCustomError as exc:
        raise HookConfigError(f"max_cost: {exc.message()}") from exc
    if amount < 0:
        raise HookConfigError(f"max_cost must not be negative; got {amount}")
    return amount


def _read_tokens(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise HookConfigError(f"max_tokens must be a non-negative int; got {value!r}")
    return value


def _same_scale(*amounts: Decimal) -> list[str]:
    """Write `amounts` with the same number of decimal places, so they read side by side."""
    places = max(max(0, -_exponent(amount)) for amount in amounts)
    return [f"{amount:.{places}f}" for amount in amounts]


def _exponent(amount: Decimal) -> int:
    exponent = amount.as_tuple().exponent
    # Only NaN and infinities have a non-int exponent, and costs are finite.
    return exponent if isinstance(exponent, int) else 0
