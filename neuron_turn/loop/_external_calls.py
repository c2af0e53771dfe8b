"""Calls of external tools: checked before the turn hands them out, answered on resume.

See `neuron_tool.external`: the turn pauses on such a call rather than run it,
and the caller's `Decision.answer` becomes the call's result.
"""

from __future__ import annotations

from neuron_tool import ToolInputError, ToolRegistry

from ._convert import json_text
from ._tool_input import AnsweredCall, RefusedCall
from .approval import Decision
from .config import ResolvedConfig
from .provider import ToolUsePart

__all__ = ["answered_call", "screened_external"]


def screened_external(
    call: ToolUsePart, tools: ToolRegistry, settings: ResolvedConfig
) -> ToolUsePart:
    """`call` as the turn hands it out: refused unrun if it could not run, else as it is.

    Refused when its tool is not allowed in this turn or its input does not
    fit the tool's schema, with the result a run call would have. Why: the
    model's input is untrusted; the caller gets only input that fits, and the
    model reads at once what it got wrong. Calls of other tools pass.
    """
    name = call.name
    if isinstance(call, RefusedCall) or name not in tools.external_names:
        return call
    if not settings.allows(name):
        refusal = f"Error: the tool {name!r} is not allowed in this turn"
        return RefusedCall(call.id, name, call.input, refusal)
    try:
        tools.check_input(name, call.input)
    except ToolInputError as exc:
        return RefusedCall(call.id, name, call.input, str(exc))
    return call


def answered_call(call: ToolUsePart, decision: Decision) -> ToolUsePart:
    """`call` answered unrun with the caller's output (`Decision.answer`), an error or not."""
    text = json_text(decision.output)
    if decision.is_error:
        return RefusedCall(call.id, call.name, call.input, text)
    return AnsweredCall(call.id, call.name, call.input, text)
