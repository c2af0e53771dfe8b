"""The warnings of web searches no price covers, as a turn's output holds them.

The providers' fee tests (OpenAI Responses, Anthropic, Gemini grounding) each check
the same two: the first as its call ended, then the turn's total.
"""

from __future__ import annotations

from pydantic import JsonValue

from layer0 import LogEffect, LogLevel, TurnOutput

Warning = tuple[LogLevel, str, JsonValue]


def warnings_of(output: TurnOutput) -> list[Warning]:
    """The `log` effects of `output` as (level, message, data)."""
    return [(e.level, e.message, e.data) for e in output.effects if isinstance(e, LogEffect)]


def unpriced_searches(model: str, first: int, total: int) -> list[Warning]:
    """The warnings of `first` searches at the first call of `model`, then `total` in all."""
    return [
        (
            LogLevel.WARN,
            f"web search price unknown for model {model!r}; its {first} web searches are not "
            "counted in the cost",
            {"model": model, "web_searches": first},
        ),
        (
            LogLevel.WARN,
            f"web search price unknown for model {model!r}; in all, this turn's {total} web "
            "searches are not counted in the cost",
            {"model": model, "web_searches": total},
        ),
    ]
