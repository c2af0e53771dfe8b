"""Strict tools: a tool with `strict=True` is refused over a provider without strict mode.

A strict tool (`@tool(strict=True)`, `neuron_tool.strict`) asks the provider to
constrain the model's input to its schema as it is decoded. A provider that does
so sets `takes_strict_tools = True` (OpenAI, Anthropic, Gemini); a turn offering
a strict tool to any other is refused, when it is made for the tools it has then
and before each model call for the tools a `prepare` offers, never sent without
the constraint it asked for.

A typed turn's final-answer tool (`tool` mode) is strict as its `OutputSpec`
says: with `strict=True` it is refused like any strict tool, when the turn is
made; with `strict=None` it is strict only over a provider that also infers
strict tools (`infers_strict_tools`, as pydantic-ai infers `strict` for OpenAI
and not for Anthropic), and only for a schema strict mode takes as it is, so it
is never refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from layer0 import NonRetryableError
from neuron_tool import ToolSchema

from .output import OutputSpec

__all__ = [
    "UnsupportedStrictOutputError",
    "UnsupportedStrictToolsError",
    "check_strict_output",
    "check_strict_tools",
    "infers_strict_tools",
    "takes_strict_tools",
]


class UnsupportedStrictToolsError(NonRetryableError, ValueError):
    """A strict tool offered over a provider without strict mode (`takes_strict_tools`)."""


class UnsupportedStrictOutputError(UnsupportedStrictToolsError):
    """A strict final-answer tool (`OutputSpec(strict=True)`, tool mode) over a provider without.

    Its own class: what to change is the output spec (or an input's
    `output_strict`), not a tool.
    """


def check_strict_tools(tools: Iterable[ToolSchema], provider: object) -> None:
    """Refuse the strict ones among `tools` when `provider` does not take strict tools.

    Raises:
        UnsupportedStrictToolsError: naming the tools and the provider.
    """
    if takes_strict_tools(provider):
        return
    strict = [tool.name for tool in tools if tool.strict]
    if strict:
        raise UnsupportedStrictToolsError(
            f"the provider {type(provider).__name__} has no strict mode for tool inputs, and "
            f"the tool(s) {', '.join(strict)} ask for it (strict=True); make them "
            "strict=None (their input is still checked against the schema)"
        )


def takes_strict_tools(provider: object) -> bool:
    """Whether `provider` sends strict tools in its API's strict mode (`takes_strict_tools`)."""
    return getattr(provider, "takes_strict_tools", False) is True


def infers_strict_tools(provider: object) -> bool:
    """Whether `provider` takes strict tools and makes one that leaves `strict` None strict.

    A provider sets `infers_strict_tools = True` where strict mode may be used
    unasked, as pydantic-ai infers `strict` for OpenAI's tools; not where it is on
    some models only or counts against limits of its own (Anthropic's strict tool
    use: newer models, 20 strict tools and 24 optional parameters a request;
    Cerebras': 5 `anyOf` branches), which could refuse a request that worked
    without it. The loop makes a typed turn's final-answer tool strict where the
    provider infers strict tools and its schema fits strict mode as it is.
    """
    return takes_strict_tools(provider) and getattr(provider, "infers_strict_tools", False) is True


def check_strict_output(output: OutputSpec[Any], provider: object) -> None:
    """Refuse a tool-mode output asking for a strict final-answer tool over `provider` without one.

    Only `OutputSpec(strict=True)` asks whatever the provider: with `strict=None`
    the final-answer tool is strict only where the provider infers strict tools.

    Raises:
        UnsupportedStrictOutputError: naming the output, its tool and the provider.
    """
    strict = [repr(tool.name) for tool in output.tool_schemas() if tool.strict]
    if takes_strict_tools(provider) or not strict:
        return
    tools = f"tool {strict[0]}" if len(strict) == 1 else f"tools {', '.join(strict)}"
    raise UnsupportedStrictOutputError(
        f"the provider {type(provider).__name__} has no strict mode for tool inputs, and "
        f"the output {output.name!r} asks for its final-answer {tools} to be strict "
        "(OutputSpec(strict=True), or an input's output_strict, in tool mode); make it "
        "strict=None (the answer is still validated against the schema), or use another "
        "output mode"
    )
