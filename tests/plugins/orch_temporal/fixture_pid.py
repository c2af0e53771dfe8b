"""A tool reporting the process it runs in: which process an environment ran a turn in.

Registered by recipes (`TurnRecipe(plugins=(__name__,))`), never installed.
"""

from __future__ import annotations

import os

from neuron_tool import tool
from neuron_turn import RegisterTool, hookimpl


@tool
def pid() -> int:
    """Return the id of the process this tool runs in."""
    return os.getpid()


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Offer `pid`."""
    register(pid)
