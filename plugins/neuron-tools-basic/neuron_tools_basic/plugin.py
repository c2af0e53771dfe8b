"""The `neuron_turn` entry point: registers `calculator`, `clock`, `shell` and `python`.

All need only the standard library and `neuron_tool`, so importing them
here keeps plugin listing cheap. `shell` and `python` require isolation:
they run only inside an environment's sandbox.
"""

from __future__ import annotations

from neuron_turn.plugins.hookspecs import RegisterTool, hookimpl

from .calculator import calculator
from .clock import clock
from .python_code import python
from .shell import shell


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Offer `calculator`, `clock`, `shell` and `python`."""
    register(calculator)
    register(clock)
    register(shell)
    register(python)
