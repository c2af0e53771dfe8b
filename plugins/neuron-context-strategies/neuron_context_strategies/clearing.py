"""`ClearToolResults`: older tool results replaced by a short placeholder.

Tool output is usually the bulk of a long agent session, and the model
rarely needs an old page of it verbatim once it has acted on it. Clearing
keeps every call and a result for each (so each provider still accepts the
history, and the model still sees what it did), only the old content goes:
its text and the images and documents the tool returned with it (usually the
largest part), which the placeholder names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from neuron_turn import ProviderMessage, ToolResultPart
from neuron_turn.loop.cleared_results import CLEARED_PREFIX, cleared, is_placeholder
from neuron_turn.loop.context import CompactionBudget
from neuron_turn.loop.exchanges import exchanges

from ._options import checked_count
from .staged import Staged

__all__ = ["CLEARED_PREFIX", "ClearToolResults"]


class ClearToolResults(Staged):
    """Replaces tool results, oldest first, by a placeholder until the conversation fits.

    The newest `keep` results stay whole, as do results shorter than
    `min_chars` with no files (a placeholder would save nothing) and those
    of pinned exchanges. A cleared result's files go with its text. Alone
    (`clear_tool_results`), it then slides if clearing was not enough; in
    `tiered`, summarising comes between.
    """

    name = "clear_tool_results"

    def __init__(self, *, keep: int = 3, min_chars: int = 200) -> None:
        """Keep the newest `keep` results whole and never clear one under `min_chars`.

        Raises:
            StrategyOptionError: `keep` or `min_chars` is no whole number, or negative.
        """
        self.keep = checked_count("keep", keep, least=0)
        self.min_chars = checked_count("min_chars", min_chars, least=0)
        super().__init__([self])

    def __repr__(self) -> str:
        return f"ClearToolResults(keep={self.keep}, min_chars={self.min_chars})"

    async def reduce(
        self, messages: Sequence[ProviderMessage], budget: CompactionBudget
    ) -> list[ProviderMessage]:
        """Clear results oldest first, stopping as soon as the conversation fits."""
        current = list(messages)
        tokens = budget.count(current)
        for index, position in self._clearable(current):
            if tokens <= budget.limit:
                break
            message = current[index]
            before = budget.count([message])
            parts = list(message.content)
            part = parts[position]
            assert isinstance(part, ToolResultPart)
            parts[position] = cleared(part)
            current[index] = replace(message, content=parts)
            tokens -= before - budget.count([current[index]])
        return current

    def _clearable(self, messages: Sequence[ProviderMessage]) -> list[tuple[int, int]]:
        """(message, part) positions of results that may be cleared, oldest first."""
        results: list[tuple[int, int]] = []
        for span in exchanges(messages):
            if any(messages[i].pinned for i in span):
                continue
            for index in span:
                for position, part in enumerate(messages[index].content):
                    if isinstance(part, ToolResultPart):
                        results.append((index, position))
        newest_kept = set(results[max(0, len(results) - self.keep) :]) if self.keep else set()
        return [
            (index, position)
            for index, position in results
            if (index, position) not in newest_kept
            and _clearable(messages[index].content[position], self.min_chars)
        ]


def _clearable(part: object, min_chars: int) -> bool:
    if not isinstance(part, ToolResultPart):
        return False
    if part.files:
        return True  # a file outweighs any placeholder, however short the text
    return len(part.content) >= min_chars and not is_placeholder(part.content)
