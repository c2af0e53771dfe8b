"""`Cost`: a `moneyed.Money` in USD that travels as a decimal string.

The reference (`rust_decimal` with `serde-str`) writes a cost as a JSON string,
never a number, keeps its scale (`"0.00030"`) and never writes an exponent.
What a cost can be on the wire is what a `rust_decimal::Decimal` can hold,
and this module holds costs to exactly that, so the same JSON means the same
amount to both sides and Python writes the text the reference would write.

Precision on the wire:
    A cost is a sign, an integer mantissa below 2**96
    (79228162514264337593543950335 at most) and a scale of 0 to 28 digits
    after the point: at most 28 decimal places and 28 or 29 significant
    digits, fewer the larger the integer part.

Reading a string (what the reference's `Decimal::from_str` does):
    Digits are read left to right until the 28th decimal place, or until one
    more digit would take the mantissa to 2**96. The first digit not kept
    decides the rounding: 5 to 9 round away from zero, 0 to 4 cut (on the
    exact value this is round-half-away-from-zero, never half-even). Rounding
    up to exactly 2**96 drops one more place. So
    `"0.12345678901234567890123456789"` is `"0.1234567890123456789012345679"`,
    `"9.9999999999999999999999999999"` is `"10.000000000000000000000000000"`
    (29 nines do not fit in 96 bits), `"-0.00000000000000000000000000005"` is
    `"-0.0000000000000000000000000001"` and `"1000000.000000000000000000000000000"`
    is `"1000000.0000000000000000000000"` (the scale falls to what fits).
    Trailing zeros are kept otherwise. An integer part of 2**96 or more is
    refused; so is a number that rounds up to 2**96 with no place left to drop.

    The reference is lenient too: `"+1.5"`, `".5"`, `"5."` and `"1_000.5"` are
    read; `-0` is `0` (zero has no sign). JSON numbers, blanks, `NaN`,
    `Infinity` and any character other than ASCII digits, `_`, one point and a
    leading sign are refused.

Exponents (the reference's `Decimal::from_scientific`, tried when the above fails):
    `"1e-4"` is `"0.0001"` and `"1.50e1"` is `"15.0"`; an exponent above the
    number's own scale makes an integer (`"1E+2"` is `"100"`, `"0.5e1"` is
    `"5"`). Nothing is rounded here: a result past 28 places (`"1e-30"`), an
    exponent above 28 (`"1e999999999"`) or an integer of 2**96 or more is refused.

One deliberate difference:
    The reference stops reading at the character it rounds by. So it would
    read `"1.00000000000000000000000000000e5"` as 1 and accept
    `"0.00000000000000000000000000001x"`. It would also round
    `"1.0000000000000000000000000000_9"` down, reading that `_` as 0. Here
    what follows must be digits or `_`, and a `_` may not hide a round-up.
    Text the reference would read as another amount than it says is refused,
    never read differently, so all accepted text means its exact value
    rounded by the rule above, which is also what the reference reads.

Python amounts (`Decimal`, `Money`, the results of arithmetic such as a cost
sum) are read as the reference would read their exact positional text: the
largest scale of at most 28 (and at most their own) at which rounding half
away from zero fits in 96 bits. Validating a model does this, and so does
writing one, so an amount summed outside validation reaches the wire in the
reference's form too. Half away from zero, although rust_decimal's own
arithmetic rounds half to even, because the reference never sees Python's
arithmetic, only text: a Python amount and its exact text must mean the same
cost. Errors are pydantic validation errors naming the field.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Final, TypeAlias

from moneyed import Money, get_currency
from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from ._wire_decimal import fit, read_text, write

__all__ = ["USD", "Cost", "cost_to_wire", "parse_cost", "usd"]

USD: Final = "USD"

_USD_CURRENCY: Final = get_currency(USD)
"""USD's Currency: Money given a code looks it up on every construction."""
_ZERO: Final = Decimal(0)


def usd(amount: Decimal | str | int = 0) -> Money:
    """Return `amount` as USD Money (a convenience for building costs).

    Raises:
        PydanticCustomError: `amount` is not a cost the wire can carry.
    """
    if isinstance(amount, int):
        if amount == 0:
            # The zero cost (a free call, a total before the first) is asked for on
            # every call; 0 needs no fitting.
            return Money(_ZERO, _USD_CURRENCY)
        amount = Decimal(amount)
    if isinstance(amount, Decimal):
        return Money(fit(amount), _USD_CURRENCY)
    return parse_cost(amount)


def parse_cost(value: object) -> Money:
    """Read a cost from Money (USD), a Decimal or a decimal string, as the reference would.

    Raises:
        PydanticCustomError: the value is a JSON number, not USD, not a decimal
            the reference reads, not finite, or out of the reference's range.
    """
    if isinstance(value, Money):
        currency = str(value.currency)
        if currency != USD:
            raise PydanticCustomError(
                "cost_currency",
                "costs are in USD; got a Money in {currency}",
                {"currency": currency},
            )
        return Money(fit(value.amount), _USD_CURRENCY)
    if isinstance(value, Decimal):
        return Money(fit(value), _USD_CURRENCY)
    if isinstance(value, str):
        return Money(read_text(value), _USD_CURRENCY)
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
    """Write a cost as the reference does: plain decimal, scale kept, no exponent.

    The amount is fitted first, so a sum built outside validation goes out in
    the reference's form too.

    Raises:
        PydanticCustomError: the amount is not finite or is 2**96 or more in size.
    """
    return write(fit(cost.amount))


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
