"""The checks of strategy options, so a wrong one fails when the strategy is built (private).

Options come from the command line (`--context-option keep=2.5`) and files as well as
from code; one that only failed when the context first filled would end a turn hours in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import StrategyOptionError

__all__ = ["checked_count", "checked_fraction", "checked_mapping", "checked_text"]


def checked_count(name: str, value: object, *, least: int) -> int:
    """`value` if it is an int (no bool) of at least `least`.

    Raises:
        StrategyOptionError: it is not, naming the option and the value.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise StrategyOptionError(f"{name} must be a whole number; got {value!r}")
    if value < least:
        rule = "must not be negative" if least == 0 else f"must be at least {least}"
        raise StrategyOptionError(f"{name} {rule}; got {value}")
    return value


def checked_fraction(name: str, value: object) -> float:
    """`value` if it is a number strictly between 0 and 1.

    Raises:
        StrategyOptionError: it is not, naming the option and the value.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise StrategyOptionError(f"{name} must be between 0 and 1; got {value!r}")
    return float(value)


def checked_text(name: str, value: object) -> str | None:
    """`value` if it is None or a non-empty string.

    Raises:
        StrategyOptionError: it is not, naming the option and the value.
    """
    if value is None or (isinstance(value, str) and value):
        return value
    raise StrategyOptionError(f"{name} must be a model's name; got {value!r}")


def checked_mapping(name: str, value: object) -> dict[str, Any]:
    """`value` as a dict if it is None or a mapping with string keys.

    Raises:
        StrategyOptionError: it is not, naming the option and the value.
    """
    if value is None:
        return {}
    if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
        return dict(value)
    raise StrategyOptionError(f"{name} must be a mapping of option names; got {value!r}")
