"""An MCP server's questions mid tool call, put to the person at the terminal.

`run` and `chat` on a terminal give their MCP servers (`--mcp`, `--mcp-url`)
an elicitation handler (`neuron_tool.mcp.elicitation`): the server's message is
shown (inert: a server is untrusted), the person answers yes, no or cancel,
and for a form each field in turn, read by its type; an answer the schema
refuses is said so and asked again. Off a terminal no handler is given: the
client declares no elicitation, and a server that asks is told so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from pydantic import JsonValue

from neuron_tool import ToolInputError
from neuron_tool.schema import InputValidator

from ._approve import PROG, Prompter

if TYPE_CHECKING:
    # The MCP SDK takes ~0.5 s to import: only a run with MCP servers needs it.
    from neuron_tool.mcp import Elicitation, ElicitationAnswer

__all__ = ["TerminalQuestions"]

_CHOICE: Final = "  answer it? [y]es, [n]o, [c]ancel: "
_YES: Final = frozenset({"y", "yes"})
_NO: Final = frozenset({"n", "no"})


class _Unanswered(Exception):
    """The input ended mid-form."""


class TerminalQuestions:
    """The command line's elicitation handler: asks through whichever `Prompter` asks now.

    Why late-bound: the MCP servers connect when the turn is built, before the
    chat's first answer makes the prompter that owns the terminal.
    """

    def __init__(self, prompter: Prompter | None = None) -> None:
        """Ask through `prompter`, or the one set on `self.prompter` later."""
        self.prompter = prompter

    async def __call__(self, elicitation: Elicitation) -> ElicitationAnswer:
        """Put `elicitation` to the person; cancel when nobody can be asked now."""
        from neuron_tool.mcp import ElicitationAnswer

        prompter = self.prompter
        if prompter is None:
            return ElicitationAnswer.cancel()
        prompter.begin()
        prompter.say(f"{PROG}: MCP server {elicitation.server!r} asks: {elicitation.message}")
        if elicitation.url is not None:
            prompter.say(f"  open {elicitation.url}")
        try:
            return await _answer(prompter, elicitation)
        except _Unanswered:
            return ElicitationAnswer.cancel()


async def _answer(prompter: Prompter, elicitation: Elicitation) -> ElicitationAnswer:
    from neuron_tool.mcp import ElicitationAnswer

    while True:
        choice = await _line(prompter, _CHOICE)
        choice = choice.strip().lower()
        if choice in _NO:
            return ElicitationAnswer.decline()
        if choice in ("c", "cancel"):
            return ElicitationAnswer.cancel()
        if choice in _YES:
            break
        prompter.say("  answer y, n or c")
    if elicitation.url is not None:
        return ElicitationAnswer.accept()
    validator = InputValidator(dict(elicitation.schema))
    while True:
        content = await _form(prompter, elicitation.schema)
        try:
            validator.check("", content)
        except ToolInputError as exc:
            prompter.say(f"  {exc.path}: {exc.message}; answer again")
            continue
        return ElicitationAnswer.accept(content)  # type: ignore[arg-type]


async def _form(prompter: Prompter, schema: Mapping[str, Any]) -> dict[str, JsonValue]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    content: dict[str, JsonValue] = {}
    for name, field in properties.items():
        value = await _field(prompter, name, field if isinstance(field, dict) else {}, required)
        if value is not _LEFT_OUT:
            content[name] = value  # type: ignore[assignment]
    return content


_LEFT_OUT: Final = object()


async def _field(
    prompter: Prompter, name: str, field: Mapping[str, Any], required: set[str]
) -> object:
    read = _reader(field)
    question = _question(name, field, required)
    while True:
        text = (await _line(prompter, question)).strip()
        if not text:
            if "default" in field:
                return field["default"]
            if name not in required:
                return _LEFT_OUT
            prompter.say(f"  {name} is required")
            continue
        try:
            return read(text)
        except ValueError as exc:
            prompter.say(f"  {exc}")


def _question(name: str, field: Mapping[str, Any], required: set[str]) -> str:
    parts = [str(field.get("title") or name)]
    description = field.get("description")
    if description:
        parts.append(f"({description})")
    choices = _choices(field)
    if choices:
        parts.append("[" + ", ".join(choices) + "]")
    elif field.get("type") == "boolean":
        parts.append("[y/n]")
    if "default" in field:
        parts.append(f"default {json.dumps(field['default'])}")
    elif name not in required:
        parts.append("optional")
    return "  " + " ".join(parts) + ": "


def _choices(field: Mapping[str, Any]) -> list[str]:
    items = field.get("items") if field.get("type") == "array" else field
    if not isinstance(items, Mapping):
        return []
    if isinstance(items.get("enum"), list):
        return [str(choice) for choice in items["enum"]]
    options = items.get("oneOf") or items.get("anyOf")
    if isinstance(options, list):
        return [str(o["const"]) for o in options if isinstance(o, dict) and "const" in o]
    return []


def _reader(field: Mapping[str, Any]) -> Callable[[str], object]:
    kind = field.get("type")
    if kind == "boolean":
        return _boolean
    if kind == "integer":
        return _integer
    if kind == "number":
        return _number
    if kind == "array":
        return lambda text: [part.strip() for part in text.split(",") if part.strip()]
    return str


def _boolean(text: str) -> bool:
    if text.lower() in _YES | {"true"}:
        return True
    if text.lower() in _NO | {"false"}:
        return False
    raise ValueError("answer y or n")


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None


def _number(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not math.isfinite(number):  # JSON has no infinity
        raise ValueError(f"{text!r} is not a finite number")
    return number


async def _line(prompter: Prompter, question: str) -> str:
    line = await prompter.ask(question)
    if line is None:
        raise _Unanswered
    return line
