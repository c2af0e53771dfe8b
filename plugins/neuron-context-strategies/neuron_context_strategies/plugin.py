"""The `neuron_turn` entry point: registers `clear_tool_results`, `summarize` and `tiered`."""

from __future__ import annotations

from neuron_turn import RegisterContextStrategy, hookimpl

from .clearing import ClearToolResults
from .summary import Summarize
from .tiered import tiered


@hookimpl
def register_context_strategies(register: RegisterContextStrategy) -> None:
    """Offer `clear_tool_results`, `summarize` and `tiered` (options: their constructors')."""
    register("clear_tool_results", ClearToolResults)
    register("summarize", Summarize)
    register("tiered", tiered)
