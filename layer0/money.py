"""`Cost`: a `moneyed.Money` in USD that travels as a decimal string.

The reference (rust_decimal with `serde-str`) rejects JSON numbers, keeps the
scale (`"0.00030"`), never writes an exponent and holds at most 28 fractional
digits; this type does the same, so costs never pass through a float.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Context, Decimal, InvalidOperation
from typing import Annotated, Any, Final, TypeAlias

from moneyed import Money
from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

__all__ = ["USD", "Cost", "cost_to_wire", "parse_cost", "usd"]

USD: Final = "USD"
_MAX: Final = Decimal("79228162514264337593543950335")
_MAX_SCALE: Final = 28
_QUANTUM: Final = Decimal(1).scaleb(-_MAX_SCALE)
# Wide enough that rounding to 28 places never runs out of digits.
_EXACT: Final = Context(prec=120, rounding=ROUND_HALF_EVEN)
_DECIMAL_TEXT: Final = re.compile(r"[+-]?(?:\d[\d_]*)?(?:\.(?:\d[\d_]*)?)?(?:[eE][+-]?\d+)?")


def usd(amount: Decimal | str | int = 0) -> Money:
    """Return `amount` as USD Money (a convenience for building costs)."""
    return parse_cost(amount if not isinstance(amount, int) else Decimal(amount))


def parse_cost(value: object) -> Money:
    """Read a cost from Money (USD), a Decimal or a decimal string.

    Raises:
        PydanticCustomError: the value is a JSON number, not USD, or not a decimal.
    """
    if isinstance(value, Money):
        currency = str(value.currency)
        if currency != USD:
            raise PydanticCustomError(
                "cost_currency",
                "costs are in USD; got a Money in {currency}",
                {"currency": currency},
            )
        return Money(_canonical(value.amount), USD)
    if isinstance(value, Decimal):
        return Money(_canonical(value), USD)
    if isinstance(value, str):
        return Money(_canonical(_decimal_from_text(value)), USD)
    if isinstance(value, bool | int | float):
        raise PydanticCustomError(
            "cost_type",
            'costs are decimal strings in USD (like "0.0003"), not JSON numbers; got {value}',
            {"value": value},
        )
    raise PydanticCustomError(
        "cost_type",
        "costs are decimal strings in USD; got a {kind}",
        {"kind": type(value).__name__},
    )


def cost_to_wire(cost: Money) -> str:
    """Write a cost as the reference does: plain decimal, scale kept, no exponent."""
    return format(cost.amount, "f")


def _decimal_from_text(text: str) -> Decimal:
    if not any(ch.isdigit() for ch in text) or not _DECIMAL_TEXT.fullmatch(text):
        raise PydanticCustomError(
            "cost_format",
            "costs are decimal strings in USD (like \"0.0003\"); got '{text}'",
            {"text": text},
        )
    try:
        return Decimal(text.replace("_", ""))
    except InvalidOperation as exc:  # pragma: no cover - the pattern admits only decimals
        raise PydanticCustomError("cost_format", "not a decimal: '{text}'", {"text": text}) from exc


def _canonical(amount: Decimal) -> Decimal:
    if not amount.is_finite():
        raise PydanticCustomError("cost_format", "a cost must be finite; got {v}", {"v": amount})
    exponent = amount.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent < -_MAX_SCALE:
        amount = amount.quantize(_QUANTUM, context=_EXACT)
    if exponent > 0:
        amount = amount.quantize(Decimal(1), context=_EXACT)
    if amount.copy_abs() > _MAX:
        raise PydanticCustomError(
            "cost_range",
            "a cost must be at most {max} in size; got {v}",
            {"max": _MAX, "v": amount},
        )
    return amount.copy_abs() if amount.is_zero() else amount


class _CostSchema:
    """Pydantic schema for `Cost`: validation, the string wire form, JSON Schema."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            parse_cost,
            serialization=core_schema.plain_serializer_function_ser_schema(
                cost_to_wire, when_used="json"
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "pattern": r"^-?\d+(\.\d+)?$",
            "description": "A cost in USD as a decimal string, never a JSON number.",
        }


Cost: TypeAlias = Annotated[Money, _CostSchema]
"""A cost in USD: `moneyed.Money` in Python, a decimal string on the wire."""
