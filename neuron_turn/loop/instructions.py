"""Dynamic instructions: a system prompt computed for each run.

`NeuronTurnConfig(instructions=fn)` makes part of the system prompt a
function of the run: `fn(context)` gets the `neuron_tool.RunContext` of the
call (the caller's `deps`, the `session`, the `input`, the deadline) and
returns the text, sync or async. It runs once per `execute` (or `stream`),
before the first model call and within the turn's `max_duration`; the
system prompt is then the configured `system`, this text, and the call's
`TurnConfig.system_addendum`, each on its own line(s), empty parts left out.

The function is the caller's code, not the model's: when it raises or
returns something other than a string, the turn fails with an
`InstructionsError` naming the function and what went wrong, before any
model call is made.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from layer0 import ContextAssemblyError
from neuron_tool import RunContext

__all__ = ["Instructions", "InstructionsError", "render_instructions"]

Instructions: TypeAlias = Callable[[RunContext[Any]], str | Awaitable[str]]
"""A function of the run context returning (or resolving to) the instructions text."""


class InstructionsError(ContextAssemblyError):
    """The instructions function raised or did not return a string; no model was called."""


async def render_instructions(instructions: Instructions, context: RunContext[Any]) -> str:
    """Return the text `instructions` makes for `context`.

    Raises:
        InstructionsError: the function raised (the cause is chained) or returned
            something other than a string.
    """
    name = _name(instructions)
    try:
        text = instructions(context)
        if inspect.isawaitable(text):
            text = await text
    except Exception as exc:
        raise InstructionsError(
            f"the instructions function {name} raised {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(text, str):
        raise InstructionsError(
            f"the instructions function {name} returned a value of type "
            f"{type(text).__name__}, not a str"
        )
    return text


def _name(function: object) -> str:
    name = getattr(function, "__qualname__", None) or type(function).__name__
    return f"{name!r}"
