"""Checking a provider's `prices=` option: USD per million tokens, by model, as decimals.

The providers that take user prices (`{model: {"input_mtok": "0.3", ...}}`)
check each entry the same way; only the keys a provider bills differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation

__all__ = ["price_entry"]


def price_entry(
    model: str, entry: Mapping[str, object], *, keys: tuple[str, ...], example: str
) -> dict[str, Decimal]:
    """Check one model's entry of a `prices=` table; return its amounts by key.

    `keys` are the ones the provider bills (`input_mtok` and `output_mtok`
    among them, both required); `example` is a typical amount quoted when a
    value is not a decimal string.

    Raises:
        ValueError: an unknown key, a missing input/output price, a float or a
            value that is not a non-negative decimal.
    """
    unknown = set(entry) - set(keys)
    if unknown:
        raise ValueError(f"prices[{model!r}]: unknown key(s) {sorted(unknown)}; use {keys}")
    missing = {"input_mtok", "output_mtok"} - set(entry)
    if missing:
        raise ValueError(f"prices[{model!r}]: missing {sorted(missing)}")
    return {key: _decimal(model, key, value, example) for key, value in entry.items()}


def _decimal(model: str, key: str, value: object, example: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, str | Decimal | int):
        raise ValueError(
            f"prices[{model!r}][{key!r}] must be a decimal string like {example!r} "
            f"(not {type(value).__name__}: floats would lose cents)"
        )
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"prices[{model!r}][{key!r}]: {value!r} is not a decimal") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"prices[{model!r}][{key!r}]: {value!r} is not a non-negative amount")
    return amount
