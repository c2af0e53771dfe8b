"""neuron-tools-basic: a safe arithmetic `calculator` (never `eval`) and a `clock`."""

from .calculator import (
    MAX_EXPONENT,
    MAX_EXPRESSION_LENGTH,
    MAX_INTEGER_BITS,
    CalculatorError,
    calculator,
    evaluate,
)
from .clock import ClockError, clock, current_time

__all__ = [
    "MAX_EXPONENT",
    "MAX_EXPRESSION_LENGTH",
    "MAX_INTEGER_BITS",
    "CalculatorError",
    "ClockError",
    "calculator",
    "clock",
    "current_time",
    "evaluate",
]
