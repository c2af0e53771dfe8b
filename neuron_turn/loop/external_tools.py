"""External tools offered by the caller of one turn, and the calls the turn hands out.

An external tool (`neuron_tool.ExternalTool`) is one the turn's caller carries
out: the turn checks a call's input and pauses on it, and the caller resumes
it with the call's output (`Decision.answer`). A `NeuronTurn` may have them in
its registry, or its caller may offer some for one call only:
`with_external_tools(input, tools)` puts them in the input's options
(`TurnInput.metadata["neuron_turn"]["external_tools"]`, a wire form the Rust
reference carries), and that turn offers them beside its own. Why: a frontend
knows its tools (AG-UI's, the browser's) only when it sends a message; the
options of a paused input are kept for its resume (`paused_options`).

    {"neuron_turn": {"external_tools": [
        {"name": "pick_colour", "description": "...", "input_schema": {...}}]}}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from pydantic import JsonValue

from layer0 import TurnInput
from neuron_tool import ExternalTool, ToolInputError, ToolRegistry, is_tool_name

from ._convert import json_text
from ._tool_input import CallerAnswered, CallerFailed, RefusedCall
from .provider import ToolUsePart

__all__ = ["with_external_tools"]

_OPTIONS_KEY: Final = "neuron_turn"  # `_output_round.CALL_OPTIONS_KEY`, which imports this
_FIELDS: Final = frozenset({"name", "description", "input_schema"})


def with_external_tools(input: TurnInput, tools: Sequence[ExternalTool]) -> TurnInput:
    """Return `input` offering `tools` for that call, beside the turn's own tools.

    Their calls pause the turn for the caller to carry out and answer
    (`Decision.answer`); a resume that carries no options of its own offers
    them again. A name the turn's tools or its loop tools already use fails
    the turn before the model is called.
    """
    metadata = input.metadata if isinstance(input.metadata, dict) else {}
    options = metadata.get(_OPTIONS_KEY)
    declared: list[JsonValue] = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in tools
    ]
    options = (
        {**options, "external_tools": declared}
        if isinstance(options, dict)
        else {"external_tools": declared}
    )
    return input.model_copy(update={"metadata": {**metadata, _OPTIONS_KEY: options}})


def external_tools_of(value: JsonValue) -> tuple[ExternalTool, ...]:
    """Read the `external_tools` option (None: none).

    Raises:
        ValueError: it is not a list of tool declarations (what is wrong named).
    """
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError(f"external_tools must be a list of tools, not {type(value).__name__}")
    return tuple(_declared(index, item) for index, item in enumerate(value))


def _declared(index: int, item: JsonValue) -> ExternalTool:
    where = f"external_tools[{index}]"
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object, not {type(item).__name__}")
    unknown = sorted(set(item) - _FIELDS)
    if unknown:
        raise ValueError(f"{where} has unknown keys {unknown}; known: {sorted(_FIELDS)}")
    name, description = item.get("name"), item.get("description", "")
    schema = item.get("input_schema")
    if not is_tool_name(name):
        raise ValueError(f"{where}.name must be a tool name (1-64 of A-Z a-z 0-9 _ -)")
    if not isinstance(description, str):
        raise ValueError(f"{where}.description must be a string")
    if schema is not None and not isinstance(schema, dict):
        raise ValueError(f"{where}.input_schema must be a JSON Schema object")
    assert isinstance(name, str)  # is_tool_name
    return ExternalTool(name, description, schema)


def screened_external(
    call: ToolUsePart, tools: ToolRegistry, allows: Callable[[str], bool]
) -> ToolUsePart:
    """`call` as the turn hands it out: refused unrun if it could not run, else as it is.

    Refused when its tool is not allowed in this turn or its input does not
    fit the tool's schema, with the result a run call would have. Why: the
    model's input is untrusted; the caller gets only input that fits, and the
    model reads at once what it got wrong. Calls of other tools pass.
    `allows` says whether the turn allows a tool (`ResolvedConfig.allows`).
    """
    name = call.name
    if isinstance(call, RefusedCall) or name not in tools.external_names:
        return call
    if not allows(name):
        refusal = f"Error: the tool {name!r} is not allowed in this turn"
        return RefusedCall(call.id, name, call.input, refusal)
    try:
        tools.check_input(name, call.input)
    except ToolInputError as exc:
        return RefusedCall(call.id, name, call.input, str(exc))
    return call


def answered_call(call: ToolUsePart, output: JsonValue, is_error: bool) -> ToolUsePart:
    """`call` answered unrun with the caller's `output` (`Decision.answer`), an error or not."""
    text = json_text(output)
    if is_error:
        return CallerFailed(call.id, call.name, call.input, text)
    return CallerAnswered(call.id, call.name, call.input, text)
