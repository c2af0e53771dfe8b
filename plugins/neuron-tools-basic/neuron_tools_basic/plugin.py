"""The `neuron_turn` entry point: registers the `calculator` and `clock` tools.

Both need only the standard library and `neuron_tool`, so importing them
here keeps plugin listing cheap.
"""

from __future__ import annotations

from neuron_turn.plugins.hookspecs import RegisterTool, hookimpl

from .calculator import calculator
from .clock import clock


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Offer `calculator` and `clock`."""
    register(calculator)
    register(clock)
