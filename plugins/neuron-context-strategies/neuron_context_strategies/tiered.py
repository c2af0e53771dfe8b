"""`tiered`: clear old tool results first, summarise when clearing is not enough, slide last."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .clearing import ClearToolResults
from .staged import Staged
from .summary import Summarize

__all__ = ["tiered"]


def tiered(
    *,
    keep: int = 3,
    min_chars: int = 200,
    model: str | None = None,
    keep_recent: float = 0.5,
    max_summary_tokens: int = 1_024,
    provider_options: Mapping[str, Any] | None = None,
) -> Staged:
    """Return the tiered strategy: `ClearToolResults`, then `Summarize`, then a slide.

    Clearing is free and loses only old tool output, so it goes first; a
    summary costs a model call and keeps the gist, so it comes only when
    clearing was not enough; dropping the oldest exchanges is the last resort.
    The options are those of `ClearToolResults` and `Summarize`.

    Raises:
        StrategyOptionError: an option is out of range (the message names it).
    """
    clear = ClearToolResults(keep=keep, min_chars=min_chars)
    summarize = Summarize(
        model=model,
        keep_recent=keep_recent,
        max_summary_tokens=max_summary_tokens,
        provider_options=provider_options,
    )
    return Staged([clear, summarize], name="tiered")
