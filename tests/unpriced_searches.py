"""The warnings of hosted fees no price covers, as a turn's output holds them.

The providers' fee tests (web searches on OpenAI Responses, Anthropic and Gemini
grounding; code execution on Anthropic and OpenAI Responses) each check the same
two: the first as its call ended, then the turn's total.
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


def unpriced_code_executions(model: str, first: int, total: int) -> list[Warning]:
    """The warnings of `first` code executions at the first call of `model`, then `total`."""

    def counted(count: int) -> str:
        if count == 1:
            return "1 code execution's fee is"
        return f"{count} code executions' fees are"

    return [
        (
            LogLevel.WARN,
            f"code execution container price unknown for model {model!r}; its {counted(first)} "
            "not counted in the cost",
            {"model": model, "code_executions": first},
        ),
        (
            LogLevel.WARN,
            f"code execution container price unknown for model {model!r}; in all, this turn's "
            f"{counted(total)} not counted in the cost",
            {"model": model, "code_executions": total},
        ),
    ]
