"""The reference's decimal (`rust_decimal::Decimal`) in Python: reading, fitting, writing.

A rust_decimal is a sign, an integer mantissa below 2**96 and a scale (digits
after the point) of 0 to 28. `read_text` reads a string as the reference's
serde visitor does (`Decimal::from_str`, then `from_scientific`), refusing
the few strings it would read as another amount than they say;
`fit` brings any finite Python Decimal to the value the reference would read
from its exact positional text; `write` is the reference's `to_string`. The
rule itself is documented in `layer0.money`.
"""

from __future__ import annotations

import re
from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_UP, Context, Decimal
from typing import Final, NamedTuple

from pydantic_core import PydanticCustomError

MANTISSA_LIMIT: Final = 2**96
"""One past the largest mantissa: a value must stay below it in size."""
MAX_SCALE: Final = 28
"""The most digits a value has after the point."""
MAX_DIGITS: Final = len(str(MANTISSA_LIMIT))

# The reference's grammar without an exponent: a sign only first, one point, and
# `_` anywhere once a digit has been seen; at least one digit (checked apart).
_PLAIN: Final = re.compile(r"([+-]?)([0-9][0-9_]*)?(?:\.([0-9_]*))?")
_DIGIT: Final = re.compile(r"[0-9]")
_U32_TEXT: Final = re.compile(r"\+?[0-9]+")
_EXPONENT_MARK: Final = re.compile(r"[eE]")
# Rounding a value below 10**29 to 28 places needs at most 57 digits.
_WIDE: Final = Context(prec=80, rounding=ROUND_HALF_UP, Emax=MAX_EMAX, Emin=MIN_EMIN)
_SHOWN: Final = 48


class _Read(NamedTuple):
    negative: bool
    mantissa: int
    scale: int
    rounded: bool


def read_text(text: str) -> Decimal:
    """Read a decimal string as the reference does, or refuse it as the reference does.

    Raises:
        PydanticCustomError: not a decimal the reference reads, or out of its range.
    """
    plain = _PLAIN.fullmatch(text)
    read = _read_plain(text, plain) if plain else _read_scientific(text)
    return _decimal(read.negative, read.mantissa, read.scale)


def fit(amount: Decimal) -> Decimal:
    """Return `amount` as the reference would read its exact positional text.

    Raises:
        PydanticCustomError: `amount` is not finite or is 2**96 or more in size.
    """
    sign, digits, exponent = amount.as_tuple()
    # A non-finite amount has a letter for its exponent, and fails the first test.
    if (
        type(exponent) is int
        and -MAX_SCALE <= exponent <= 0
        and len(digits) < MAX_DIGITS
        and not (sign and amount.is_zero())
    ):
        return amount  # already what the reference holds: the common case
    if not amount.is_finite():
        raise PydanticCustomError(
            "cost_not_finite", "a cost must be a finite number; got {value}", {"value": str(amount)}
        )
    assert isinstance(exponent, int)
    scale = min(max(-exponent, 0), MAX_SCALE)
    if amount.is_zero():
        return _decimal(False, 0, scale)
    if amount.adjusted() >= MAX_DIGITS:
        raise _too_large(format(amount, "E"))
    # At 28 - adjusted places the mantissa has 29 digits and may not fit; one
    # place fewer it has 28, which always fits even after rounding up.
    scale = min(scale, MAX_SCALE - amount.adjusted())
    for places in (scale, scale - 1):
        if places < 0:
            break
        rounded = amount.quantize(Decimal((0, (1,), -places)), context=_WIDE)
        mantissa = int("".join(map(str, rounded.as_tuple().digits)))
        if mantissa < MANTISSA_LIMIT:
            return _decimal(amount.is_signed(), mantissa, places)
    raise _too_large(format(amount, "f"))


def write(amount: Decimal) -> str:
    """Write a fitted amount as the reference's `to_string` does: no exponent, scale kept."""
    return format(amount, "f")


def _read_plain(text: str, match: re.Match[str]) -> _Read:
    sign, whole, fraction = match.groups()
    if not whole and not (fraction and fraction[0].isdigit()):
        raise _malformed(text)  # no digit, or `_` before the first digit
    negative = sign == "-"
    digits = (whole or "").replace("_", "").lstrip("0")
    if len(digits) > MAX_DIGITS or int(digits or "0") >= MANTISSA_LIMIT:
        raise _too_large(text)
    mantissa, scale = int(digits or "0"), 0
    if fraction is None:
        return _Read(negative, mantissa, scale, rounded=False)
    for found in _DIGIT.finditer(fraction):
        digit = int(found.group())
        grown = mantissa * 10 + digit
        if grown >= MANTISSA_LIMIT:
            # The reference stops at the digit that would not fit and rounds by it.
            return _round(text, negative, mantissa, scale, digit)
        mantissa, scale = grown, scale + 1
        if scale == MAX_SCALE and found.end() < len(fraction):
            # It stops at 28 places and rounds by the next character, reading
            # `_` as 0 and nothing after it.
            if fraction[found.end()] == "_":
                _refuse_ignored_round_up(text, fraction, found.end())
                return _round(text, negative, mantissa, scale, 0)
            return _round(text, negative, mantissa, scale, int(fraction[found.end()]))
    return _Read(negative, mantissa, scale, rounded=False)


def _refuse_ignored_round_up(text: str, fraction: str, underscore: int) -> None:
    # The reference would cut where the written value rounds up: refuse rather
    # than read it as a different amount.
    digit = _DIGIT.search(fraction, underscore)
    if digit is not None and digit.group() >= "5":
        raise PydanticCustomError(
            "cost_format",
            "a cost may not have `_` right after its 28th decimal place when a digit "
            "of 5 or more follows (the reference would not round up); got '{text}'",
            {"text": _shown(text)},
        )


def _round(text: str, negative: bool, mantissa: int, scale: int, digit: int) -> _Read:
    if digit >= 5:
        mantissa += 1
        if mantissa >= MANTISSA_LIMIT:
            if scale == 0:
                raise _too_large(text)
            # Only 2**96 itself gets here: one place fewer, rounded half up.
            mantissa, scale = (mantissa + 4) // 10, scale - 1
    return _Read(negative, mantissa, scale, rounded=True)


def _read_scientific(text: str) -> _Read:
    parts = _EXPONENT_MARK.split(text, maxsplit=1)
    plain = _PLAIN.fullmatch(parts[0])
    if len(parts) != 2 or plain is None:
        raise _malformed(text)
    base, exponent_text = _read_plain(text, plain), parts[1]
    if base.rounded:
        # The reference would round there and never read the exponent, so the
        # text means something other than what it says: refuse it.
        raise PydanticCustomError(
            "cost_format",
            "the number before a cost's exponent must fit the wire unrounded (at most 28 "
            "decimal places, its digits below 2**96); got '{text}'",
            {"text": _shown(text)},
        )
    negative_exponent = exponent_text.startswith("-")
    exponent = _exponent(text, exponent_text[1:] if negative_exponent else exponent_text)
    if negative_exponent:
        if base.scale + exponent > MAX_SCALE:
            raise _too_many_places(text)
        return base._replace(scale=base.scale + exponent)
    if exponent <= base.scale:
        return base._replace(scale=base.scale - exponent)
    if exponent > MAX_SCALE:
        raise _exponent_too_large(text)
    mantissa = base.mantissa * 10 ** (exponent - base.scale)
    if mantissa >= MANTISSA_LIMIT:
        raise _too_large(text)
    return _Read(base.negative, mantissa, 0, rounded=False)


def _exponent(text: str, exponent: str) -> int:
    # Rust's `u32::from_str`: an optional `+`, then ASCII digits. Past 2**32 - 1
    # the reference fails to parse it, past 28 it refuses it: both are refusals,
    # so anything past 28 is capped to one value the range checks refuse.
    if not _U32_TEXT.fullmatch(exponent):
        raise _malformed(text)
    digits = exponent.lstrip("+").lstrip("0") or "0"
    return MAX_SCALE + 1 if len(digits) > len(str(MAX_SCALE)) else int(digits)


def _decimal(negative: bool, mantissa: int, scale: int) -> Decimal:
    # From text, so no context rounds the 29-digit mantissas; zero has no sign.
    sign = "-" if negative and mantissa else ""
    return Decimal(f"{sign}{mantissa}E-{scale}")


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 3]}..."


def _malformed(text: str) -> PydanticCustomError:
    return PydanticCustomError(
        "cost_format",
        "costs are decimal strings in USD (like \"0.0003\"); got '{text}'",
        {"text": _shown(text)},
    )


def _too_large(text: str) -> PydanticCustomError:
    return PydanticCustomError(
        "cost_range",
        "a cost must be less than 2**96 (79228162514264337593543950336) in size; got '{text}'",
        {"text": _shown(text)},
    )


def _exponent_too_large(text: str) -> PydanticCustomError:
    return PydanticCustomError(
        "cost_exponent",
        "a cost's exponent must be at most 28; got '{text}'",
        {"text": _shown(text)},
    )


def _too_many_places(text: str) -> PydanticCustomError:
    return PydanticCustomError(
        "cost_scale",
        "a cost in exponent form must have at most 28 decimal places "
        "(the exponent is not rounded away); got '{text}'",
        {"text": _shown(text)},
    )
