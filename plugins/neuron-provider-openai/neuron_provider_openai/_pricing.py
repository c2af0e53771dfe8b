"""What a call cost: the user's prices first, then genai-prices' maintained data.

Amounts are `Decimal` throughout and end as `moneyed.Money` in USD; no float
is ever involved. genai-prices is imported on first use, so a provider for a
local server (which costs nothing) never pays for loading its data.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final, TypeAlias

from moneyed import Money

from neuron_turn.provider import TokenUsage

logger = logging.getLogger("neuron_provider_openai")

PriceTable: TypeAlias = Mapping[str, Mapping[str, "str | Decimal | int"]]
"""`{model: {"input_mtok": "0.15", "output_mtok": "0.6", "cache_read_mtok": "0.075"}}`,
USD per million tokens as Decimal strings (or Decimals / ints; never floats)."""

_PRICE_KEYS: Final = frozenset({"input_mtok", "output_mtok", "cache_read_mtok"})
_MTOK: Final = Decimal(1_000_000)
_ZERO: Final = Money(Decimal(0), "USD")


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens for one model."""

    input_mtok: Decimal
    output_mtok: Decimal
    cache_read_mtok: Decimal | None = None
    """Price of cached prompt tokens; None bills them as ordinary input."""

    def cost(self, usage: TokenUsage) -> Decimal:
        """The cost of `usage`: cached prompt tokens are part of `input_tokens` (OpenAI)."""
        cached = min(usage.cache_read_tokens or 0, usage.input_tokens)
        cache_price = self.input_mtok if self.cache_read_mtok is None else self.cache_read_mtok
        total = (
            (usage.input_tokens - cached) * self.input_mtok
            + cached * cache_price
            + usage.output_tokens * self.output_mtok
        )
        return total / _MTOK


def parse_prices(table: PriceTable | None) -> dict[str, ModelPrice]:
    """Check and convert the `prices=` option.

    Raises:
        ValueError: an unknown key, a missing input/output price, a float or a
            value that is not a non-negative decimal.
    """
    return {model: _model_price(model, entry) for model, entry in (table or {}).items()}


def _model_price(model: str, entry: Mapping[str, str | Decimal | int]) -> ModelPrice:
    unknown = set(entry) - _PRICE_KEYS
    if unknown:
        raise ValueError(
            f"prices[{model!r}]: unknown key(s) {sorted(unknown)}; use {sorted(_PRICE_KEYS)}"
        )
    missing = {"input_mtok", "output_mtok"} - set(entry)
    if missing:
        raise ValueError(f"prices[{model!r}]: missing {sorted(missing)}")
    values = {key: _decimal(model, key, value) for key, value in entry.items()}
    return ModelPrice(**values)


def _decimal(model: str, key: str, value: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, str | Decimal | int):
        raise ValueError(
            f"prices[{model!r}][{key!r}] must be a decimal string like '0.15' "
            f"(not {type(value).__name__}: floats would lose cents)"
        )
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"prices[{model!r}][{key!r}]: {value!r} is not a decimal") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"prices[{model!r}][{key!r}]: {value!r} is not a non-negative amount")
    return amount


@dataclass(frozen=True, slots=True)
class Pricer:
    """Prices calls for one provider instance.

    Order: `overrides` for the answered model, then for the requested model;
    then genai-prices (when `lookup` is on) for the answered model; then
    0 USD when `lookup` is off (a self-hosted server), else None (unknown).
    """

    overrides: Mapping[str, ModelPrice]
    lookup: bool
    provider_id: str | None = None
    provider_api_url: str | None = None

    def cost(self, usage: TokenUsage, *, model: str, requested_model: str) -> Money | None:
        """The call's cost in USD, or None when the model's price is unknown."""
        price = self.overrides.get(model) or self.overrides.get(requested_model)
        if price is not None:
            return Money(price.cost(usage), "USD")
        if not self.lookup:
            return _ZERO
        amount = self._price_data_cost(usage, model)
        return None if amount is None else Money(amount, "USD")

    def _price_data_cost(self, usage: TokenUsage, model: str) -> Decimal | None:
        from genai_prices import Usage, calc_price

        tokens = Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
        )
        try:
            if self.provider_id is not None:
                calculation = calc_price(tokens, model, provider_id=self.provider_id)
            else:
                calculation = calc_price(tokens, model, provider_api_url=self.provider_api_url)
        except (LookupError, ValueError) as exc:
            logger.debug("no price for model %r: %s", model, exc)
            return None
        return calculation.total_price
