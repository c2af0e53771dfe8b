"""Cost of an Ollama call: zero, unless the user priced the model with `prices=`.

A local model costs nothing per token, and genai-prices has no Ollama
entries, so the default is `Money("0", "USD")` (a known cost, not None: the
loop would otherwise warn about an unknown price on every call). Users who
run Ollama cloud or want to account for their own hardware pass
`prices={"llama3.2": {"input_mtok": "0.10", "output_mtok": "0.40"}}`:
USD per million tokens, as Decimal or decimal strings, never floats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final, TypeAlias

from moneyed import Money

from neuron_turn.loop.provider import TokenUsage

__all__ = ["ModelPrice", "PriceTable", "PricesOption", "cost_of", "parse_prices"]

PricesOption: TypeAlias = Mapping[str, Mapping[str, str | Decimal | int]]
"""The `prices=` option: model name → {"input_mtok": …, "output_mtok": …}."""

_KEYS: Final = frozenset({"input_mtok", "output_mtok"})
_MILLION: Final = Decimal(1_000_000)
_ZERO: Final = Money("0", "USD")


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million input and output tokens for one model."""

    input_mtok: Decimal = Decimal(0)
    output_mtok: Decimal = Decimal(0)


PriceTable: TypeAlias = dict[str, ModelPrice]
"""Validated prices by model name."""


def parse_prices(prices: PricesOption | None) -> PriceTable:
    """Validate the `prices=` option.

    Raises:
        ValueError: an unknown key, or a value that is not a non-negative decimal.
        TypeError: a float value (floats cannot hold prices exactly).
    """
    table: PriceTable = {}
    for model, entry in (prices or {}).items():
        unknown = set(entry) - _KEYS
        if unknown:
            raise ValueError(
                f"prices[{model!r}]: unknown key(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}"
            )
        table[model] = ModelPrice(
            **{
                key: _decimal(value, where=f"prices[{model!r}][{key!r}]")
                for key, value in entry.items()
            }
        )
    return table


def _decimal(value: object, *, where: str) -> Decimal:
    if isinstance(value, float):
        raise TypeError(f"{where}: give a Decimal or a string like '0.5', not the float {value!r}")
    if not isinstance(value, str | int | Decimal) or isinstance(value, bool):
        raise ValueError(f"{where}: expected a decimal string, got {value!r}")
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"{where}: {value!r} is not a decimal number") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"{where}: {value!r} must be a finite, non-negative number")
    return amount


def cost_of(table: PriceTable, usage: TokenUsage, *, model: str, requested_model: str) -> Money:
    """Return the call's cost: priced by the answering model, else the requested one, else 0."""
    price = _lookup(table, model) or _lookup(table, requested_model)
    if price is None:
        return _ZERO
    amount = (
        usage.input_tokens * price.input_mtok + usage.output_tokens * price.output_mtok
    ) / _MILLION
    return Money(amount, "USD")


def _lookup(table: PriceTable, model: str) -> ModelPrice | None:
    # Ollama treats "llama3.2" and "llama3.2:latest" as one model.
    if model in table:
        return table[model]
    if model.endswith(":latest"):
        return table.get(model.removesuffix(":latest"))
    return table.get(f"{model}:latest")
