"""neuron-tools-basic: `calculator` (never `eval`), `clock`, sandbox-only `shell` and `python`."""

from ._subprocess import MAX_OUTPUT, CommandResult
from .calculator import (
    MAX_EXPONENT,
    MAX_EXPRESSION_LENGTH,
    MAX_INTEGER_BITS,
    CalculatorError,
    calculator,
    evaluate,
)
from .clock import ClockError, clock, current_time
from .python_code import python
from .shell import MAX_TIMEOUT, shell

__all__ = [
    "MAX_EXPONENT",
    "MAX_EXPRESSION_LENGTH",
    "MAX_INTEGER_BITS",
    "MAX_OUTPUT",
    "MAX_TIMEOUT",
    "CalculatorError",
    "ClockError",
    "CommandResult",
    "calculator",
    "clock",
    "current_time",
    "evaluate",
    "python",
    "shell",
]
