"""Strict tools: a tool with `strict=True` is refused over a provider without strict mode.

A strict tool (`@tool(strict=True)`, `neuron_tool.strict`) asks the provider to
constrain the model's input to its schema as it is decoded. A provider that does
so sets `takes_strict_tools = True` (OpenAI, Anthropic, Gemini); a turn offering
a strict tool to any other is refused, when it is made for the tools it has then
and before each model call for the tools a `prepare` offers, never sent without
the constraint it asked for.
"""

from __future__ import annotations

from collections.abc import Iterable

from layer0 import NonRetryableError
from neuron_tool import ToolSchema

__all__ = ["UnsupportedStrictToolsError", "check_strict_tools"]


class UnsupportedStrictToolsError(NonRetryableError, ValueError):
    """A strict tool offered over a provider without strict mode (`takes_strict_tools`)."""


def check_strict_tools(tools: Iterable[ToolSchema], provider: object) -> None:
    """Refuse the strict ones among `tools` when `provider` does not take strict tools.

    Raises:
        UnsupportedStrictToolsError: naming the tools and the provider.
    """
    if getattr(provider, "takes_strict_tools", False) is True:
        return
    strict = [tool.name for tool in tools if tool.strict]
    if strict:
        raise UnsupportedStrictToolsError(
            f"the provider {type(provider).__name__} has no strict mode for tool inputs, and "
            f"the tool(s) {', '.join(strict)} ask for it (strict=True); make them "
            "strict=None (their input is still checked against the schema)"
        )
