"""Costs: USD Money in Python, decimal strings on the wire, as rust_decimal writes them."""

from __future__ import annotations

import json
from decimal import Context, Decimal, localcontext

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from moneyed import Money
from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

import layer0

COST = TypeAdapter(layer0.Cost)


@pytest.mark.parametrize(
    ("text", "written"),
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
    text: str, written: str
) -> None:
    assert COST.dump_json(COST.validate_json(f'"{text}"')).decode() == f'"{written}"'


@pytest.mark.parametrize("text", ["", " 1.5", "abc", "1e", ".", "79228162514264337593543950336"])
def test_malformed_or_out_of_range_decimal_strings_are_rejected(text: str) -> None:
    with pytest.raises(ValidationError):
        COST.validate_json(f'"{text}"')


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


# --- Precision: what a rust_decimal holds (see layer0.money) -----------------

LIMIT = 2**96
PRECISE = settings(max_examples=300, deadline=None)


def _text(negative: bool, mantissa: int, scale: int) -> str:
    digits = str(mantissa).rjust(scale + 1, "0")
    whole, fraction = digits[: len(digits) - scale], digits[len(digits) - scale :]
    sign = "-" if negative and mantissa else ""
    return f"{sign}{whole}.{fraction}" if scale else f"{sign}{whole}"


def reference_reading(negative: bool, mantissa: int, scale: int) -> str | None:
    """What the reference makes of ±mantissa * 10**-scale, written; None if it refuses it.

    Derived from the reference's vectors, independently of layer0: the most
    places (28 at most) at which the value rounded half away from zero has a
    mantissa below 2**96.
    """
    for places in range(min(scale, 28), -1, -1):
        dropped = 10 ** (scale - places)
        kept, rest = divmod(mantissa, dropped)
        kept += 2 * rest >= dropped > 1
        if kept < LIMIT:
            return _text(negative, kept, places)
    return None


def _read(text: str) -> str | None:
    try:
        return COST.dump_json(COST.validate_json(json.dumps(text))).decode().strip('"')
    except ValidationError:
        return None


signs = st.booleans()
# Mantissas with 29 to 41 digits, the 96-bit edge at every scale, and the rest.
long_mantissas = st.one_of(
    st.integers(10**28, 10**41),
    st.builds(
        lambda shift, power: max(0, LIMIT * 10**power + shift),
        st.integers(-9999, 9999),
        st.integers(0, 12),
    ),
    st.integers(0, 10**41),
)
wire_mantissas = st.integers(0, LIMIT - 1)


@PRECISE
@given(signs, long_mantissas, st.integers(0, 40))
def test_long_decimal_text_rounds_half_away_from_zero_to_what_96_bits_and_28_places_hold(
    negative: bool, mantissa: int, scale: int
) -> None:
    assert _read(_text(negative, mantissa, scale)) == reference_reading(negative, mantissa, scale)


@PRECISE
@given(signs, long_mantissas, st.integers(0, 40))
def test_a_python_decimal_is_read_as_its_exact_text_is(
    negative: bool, mantissa: int, scale: int
) -> None:
    text = _text(negative, mantissa, scale)
    try:
        written = COST.dump_json(COST.validate_python(Decimal(text))).decode().strip('"')
    except ValidationError:
        written = None
    assert written == _read(text)


@PRECISE
@given(signs, wire_mantissas, st.integers(0, 28))
def test_every_value_the_wire_holds_is_read_and_written_unchanged(
    negative: bool, mantissa: int, scale: int
) -> None:
    text = _text(negative, mantissa, scale)
    assert _read(text) == text
    assert COST.validate_python(Decimal(text)).amount.as_tuple() == Decimal(text).as_tuple()


@PRECISE
@given(signs, wire_mantissas, st.integers(0, 28), st.integers(-40, 40))
def test_an_exponent_moves_the_point_exactly_or_is_refused(
    negative: bool, mantissa: int, scale: int, exponent: int
) -> None:
    text = f"{_text(negative, mantissa, scale)}e{exponent}"
    if exponent <= scale:
        places = scale - exponent
        expected = _text(negative, mantissa, places) if places <= 28 else None
    else:
        integer = mantissa * 10 ** (exponent - scale)
        expected = _text(negative, integer, 0) if exponent <= 28 and integer < LIMIT else None
    assert _read(text) == expected


@PRECISE
@given(signs, long_mantissas, st.integers(0, 40), st.data())
def test_underscores_never_change_an_amount(
    negative: bool, mantissa: int, scale: int, data: st.DataObject
) -> None:
    text = _text(negative, mantissa, scale)
    start = 1 if negative and mantissa else 0
    cuts = data.draw(st.lists(st.integers(start + 1, len(text)), max_size=4))
    spaced = text
    for cut in sorted(cuts, reverse=True):
        spaced = spaced[:cut] + "_" + spaced[cut:]
    # Refused only where the reference would cut at a `_` the written value rounds up past.
    assert _read(spaced) in (_read(text), None)
    if _read(spaced) is None and _read(text) is not None:
        with pytest.raises(ValidationError, match="reference would not round up"):
            COST.validate_python(spaced)


@PRECISE
@given(signs, wire_mantissas, st.integers(0, 28), signs, wire_mantissas, st.integers(0, 28))
@example(False, LIMIT - 1, 0, False, 1, 0)  # 2**96: refused
@example(False, LIMIT - 1, 28, False, 1, 28)  # 2**96 at 28 places: one place fewer
@example(True, 1, 28, False, 1, 28)  # zero at 28 places, no sign
def test_a_sum_goes_on_the_wire_as_the_reference_would_read_it(
    a_negative: bool, a: int, a_scale: int, b_negative: bool, b: int, b_scale: int
) -> None:
    with localcontext(Context(prec=100)):
        total = Decimal(_text(a_negative, a, a_scale)) + Decimal(_text(b_negative, b, b_scale))
    exact = total.as_tuple()
    assert isinstance(exact.exponent, int)
    expected = reference_reading(
        bool(exact.sign), int("".join(map(str, exact.digits))), -exact.exponent
    )
    # Built without validation, as the turn loop builds its hook contexts.
    cost = Money(total, "USD")
    if expected is None:
        with pytest.raises(PydanticSerializationError, match="less than 2"):
            COST.dump_json(cost)
        with pytest.raises(ValidationError, match="less than 2"):
            layer0.TurnConfig(max_cost=cost)
        return
    assert COST.dump_json(cost).decode() == f'"{expected}"'
    assert layer0.TurnConfig(max_cost=cost).model_dump(mode="json")["max_cost"] == expected


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("-0", "0"),
        ("-0.000", "0.000"),
        ("-0e5", "0"),
        ("-0.00000000000000000000000000001", "0.0000000000000000000000000000"),
        ("1e-28", "0.0000000000000000000000000001"),
        ("1.50e1", "15.0"),
        ("1.5E+2", "150"),
        ("1e-+4", "0.0001"),
        ("79228162514264337593543950335.4", "79228162514264337593543950335"),
        ("7922816251426433759354395033.55", "7922816251426433759354395034"),
        ("1.0000000000000000000000000000_4", "1.0000000000000000000000000000"),
    ],
)
def test_edge_texts_are_read_as_the_reference_reads_them(text: str, written: str) -> None:
    assert _read(text) == written


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("79228162514264337593543950335.5", "less than 2\\*\\*96"),
        ("1e29", "exponent must be at most 28"),
        ("0e29", "exponent must be at most 28"),
        ("1e999999999", "exponent must be at most 28"),
        ("1e99999999999", "exponent must be at most 28"),
        ("1.5e-28", "at most 28 decimal places"),
        ("1e-999999999", "at most 28 decimal places"),
        ("8e28", "less than 2\\*\\*96"),
        ("1e+-5", "decimal strings"),
        ("1.00000000000000000000000000000e5", "before a cost's exponent must fit"),
        ("0.00000000000000000000000000001x", "decimal strings"),
        ("1.0000000000000000000000000000_9", "would not round up"),
        ("1.0000000000000000000000000000.5", "decimal strings"),
        ("NaN", "decimal strings"),
        ("-Infinity", "decimal strings"),
        ("inf", "decimal strings"),
        ("\u0661", "decimal strings"),
        ("_1", "decimal strings"),
        ("._5", "decimal strings"),
        ("-+1", "decimal strings"),
    ],
)
def test_texts_the_reference_refuses_or_would_misread_are_refused(text: str, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        COST.validate_python(text)


def test_a_huge_text_is_refused_quickly_and_quoted_briefly() -> None:
    with pytest.raises(ValidationError) as exc:
        COST.validate_python("9" * 5_000_000)
    message = exc.value.errors()[0]["msg"]
    assert "less than 2**96" in message
    assert len(message) < 200
