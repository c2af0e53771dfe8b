"""`price_entry`: one model's entry of a provider's `prices=` option, checked."""

from __future__ import annotations

from decimal import Decimal

import pytest

from neuron_turn.loop.price_table import price_entry

KEYS = ("input_mtok", "output_mtok", "cache_read_mtok")


def test_an_entry_becomes_decimals_by_key() -> None:
    entry = {"input_mtok": "0.3", "output_mtok": 2, "cache_read_mtok": Decimal("0.03")}
    assert price_entry("m", entry, keys=KEYS, example="0.3") == {
        "input_mtok": Decimal("0.3"),
        "output_mtok": Decimal(2),
        "cache_read_mtok": Decimal("0.03"),
    }


def test_a_key_the_provider_does_not_bill_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['cache_write_mtok'\]; use \("):
        price_entry(
            "m",
            {"input_mtok": "1", "output_mtok": "1", "cache_write_mtok": "1"},
            keys=KEYS,
            example="0.3",
        )


def test_an_entry_without_an_output_price_is_refused() -> None:
    with pytest.raises(ValueError, match=r"missing \['output_mtok'\]"):
        price_entry("m", {"input_mtok": "1"}, keys=KEYS, example="0.3")


def test_a_float_is_refused_quoting_the_example() -> None:
    with pytest.raises(ValueError, match=r"decimal string like '0\.15' \(not float"):
        price_entry("m", {"input_mtok": 0.1, "output_mtok": "1"}, keys=KEYS, example="0.15")


@pytest.mark.parametrize("value", ["-1", "NaN", "Infinity"])
def test_a_negative_or_infinite_amount_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="not a non-negative amount"):
        price_entry("m", {"input_mtok": value, "output_mtok": "1"}, keys=KEYS, example="0.3")


def test_text_that_is_no_number_is_refused() -> None:
    with pytest.raises(ValueError, match="is not a decimal"):
        price_entry("m", {"input_mtok": "cheap", "output_mtok": "1"}, keys=KEYS, example="0.3")
