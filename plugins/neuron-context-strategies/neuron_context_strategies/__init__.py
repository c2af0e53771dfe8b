"""neuron_context_strategies: context strategies for long sessions, as a `neuron_turn` plugin.

- `clear_tool_results` (`ClearToolResults`): older tool results become a short
  placeholder; the newest `keep` stay whole; calls and results stay paired.
- `summarize` (`Summarize`): the older part of the conversation becomes a
  summary written by a model (the turn's own, or a cheaper one named in `model`).
- `tiered` (`tiered()`): clear first, summarise when clearing is not enough.

Each ends, if still over the limit, by dropping the oldest exchanges as
`sliding_window` does (`Staged`), so every one brings the context under the
limit that triggered it; none drops a pinned message or splits a tool call
from its result. Compose your own with `Staged([step, ...])`.
"""

from .clearing import CLEARED_PREFIX, ClearToolResults
from .errors import BudgetRequiredError, ContextStrategyError, StrategyOptionError
from .staged import CompactionStep, Staged
from .summary import SUMMARY_PREFIX, SUMMARY_SYSTEM, Summarize
from .tiered import tiered

__all__ = [
    "CLEARED_PREFIX",
    "SUMMARY_PREFIX",
    "SUMMARY_SYSTEM",
    "BudgetRequiredError",
    "ClearToolResults",
    "CompactionStep",
    "ContextStrategyError",
    "Staged",
    "StrategyOptionError",
    "Summarize",
    "tiered",
]
