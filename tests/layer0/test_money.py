"""Costs: USD Money in Python, decimal strings on the wire, as rust_decimal writes them."""

from __future__ import annotations

from decimal import Decimal

import pytest
from moneyed import Money
from pydantic import TypeAdapter, ValidationError

import layer0

COST = TypeAdapter(layer0.Cost)


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ("0.00030", "0.00030"),
        ("+1.5", "1.5"),
        (".5", "0.5"),
        ("5.", "5"),
        ("-0", "0"),
        ("1e-4", "0.0001"),
        ("1_000.5", "1000.5"),
        ("0.00000001", "0.00000001"),
        ("0." + "0" * 28 + "1", "0." + "0" * 28),
    ],
)
def test_decimal_strings_are_read_leniently_and_written_canonically(
    given: str, written: str
) -> None:
    assert COST.dump_json(COST.validate_json(f'"{given}"')).decode() == f'"{written}"'


@pytest.mark.parametrize("given", ["", " 1.5", "abc", "1e", ".", "79228162514264337593543950336"])
def test_malformed_or_out_of_range_decimal_strings_are_rejected(given: str) -> None:
    with pytest.raises(ValidationError):
        COST.validate_json(f'"{given}"')


def test_python_api_accepts_money_decimal_and_strings() -> None:
    expected = Money("0.25", "USD")
    assert COST.validate_python(Money("0.25", "USD")) == expected
    assert COST.validate_python(Decimal("0.25")) == expected
    assert COST.validate_python("0.25") == expected
    assert layer0.usd("0.25") == expected


def test_python_dump_keeps_money_and_json_dump_gives_a_string() -> None:
    cost = Money("1.50", "USD")
    assert COST.dump_python(cost) == cost
    assert COST.dump_python(cost, mode="json") == "1.50"


def test_float_is_rejected_even_in_python() -> None:
    with pytest.raises(ValidationError, match="not JSON numbers"):
        COST.validate_python(0.1)
