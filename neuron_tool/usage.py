"""`RunUsage`: what a turn has used so far, as a tool or its `prepare` sees it.

A tool or a `prepare` may decide by it, as pydantic-ai's `RunContext.usage`
lets them: hide a costly tool once the turn has spent more than a budget,
answer more briefly once many tokens went by. It is a snapshot taken when
the context is built: it does not change under the tool while it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from moneyed import Money

from layer0 import usd

__all__ = ["RunUsage"]

_FREE: Final = usd()
"""Money is immutable: one zero serves every usage that has none."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunUsage:
    """Tokens, cost and tool calls a turn has used so far (all zero before its first call).

    Why: a tool offered or acting by what the run has spent needs the loop's
    running totals; a frozen copy of them lets it read them, never change them.

    It counts this run of the turn, as its `TurnMetadata` does: a turn resumed
    after an approval pause, or the continuation of a partial turn, counts
    from zero again.
    """

    input_tokens: int = 0
    """Input tokens of the turn's model calls so far (cache reads and writes included), a
    context strategy's summary calls and what delegated agents' answers reported included."""
    output_tokens: int = 0
    """Output tokens of the same calls."""
    cost: Money = _FREE
    """What those calls cost, in USD; a model whose price is unknown adds nothing."""
    tool_calls: int = 0
    """The tool calls answered in the turn's finished rounds (those `TurnMetadata.tools_called`
    records: run, failed or refused); the calls of the round in progress are not counted."""

    @property
    def total_tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens
