"""Errors of `neuron_tracing_otel`.

TracingError                 root
└── TracingSettingError      an environment variable has a value tracing cannot use
"""

from __future__ import annotations

__all__ = ["TracingError", "TracingSettingError"]


class TracingError(Exception):
    """Root of this package's errors."""


class TracingSettingError(TracingError, ValueError):
    """An environment variable that sets up tracing has a value it cannot use."""

    def __init__(self, variable: str, value: str, expected: str) -> None:
        """Name the variable, the value found and what it may be."""
        super().__init__(f"{variable}={value!r} is not valid; expected {expected}")
        self.variable = variable
        """The environment variable at fault."""
