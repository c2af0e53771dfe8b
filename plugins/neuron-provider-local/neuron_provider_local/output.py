"""Reading the model's raw text: a tool call (or several), plain text, or a broken call.

The embedded server normally parses calls itself. When it cannot (it answers
HTTP 500) the provider asks again for the raw text and reads it here, more
leniently than the server: a call may sit in a Markdown code fence or in
`<tool_call>` tags, and text after the last call is ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final, TypeAlias

from pydantic import JsonValue

__all__ = ["MalformedCall", "ModelOutput", "PlainText", "TextCall", "ToolCalls", "parse_output"]

_FENCE: Final = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?```\Z", re.DOTALL)
_OPEN_TAG: Final = "<tool_call>"
_CLOSE_TAG: Final = "</tool_call>"
_DECODER: Final = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class TextCall:
    """One tool call written out as JSON by the model."""

    name: str
    arguments: dict[str, JsonValue]


@dataclass(frozen=True, slots=True)
class ToolCalls:
    """The text is one or more tool calls."""

    calls: tuple[TextCall, ...]


@dataclass(frozen=True, slots=True)
class PlainText:
    """The text is an answer for the user."""

    text: str


@dataclass(frozen=True, slots=True)
class MalformedCall:
    """The text starts like a tool call (a JSON object) but is not one."""

    text: str
    reason: str


ModelOutput: TypeAlias = ToolCalls | PlainText | MalformedCall
"""What `parse_output` makes of a text."""


def parse_output(text: str, *, tools: Collection[str] | None = None) -> ModelOutput:
    """Read `text`: tool calls when it is `{"name": …, "arguments": {…}}` objects, else plain text.

    Text that starts with `{` (after an optional fence or `<tool_call>` tag)
    was meant as a call: if it is not valid JSON, not a call's shape, or
    (when `tools` is given) calls a tool not in `tools`, it is a
    `MalformedCall`. `"parameters"` is read as `"arguments"`, and arguments
    written as a JSON string are decoded.
    """
    body = _unwrapped(text.strip())
    if not body.startswith("{"):
        return PlainText(text)
    try:
        calls = tuple(_call(value) for value in _json_objects(body))
    except ValueError as exc:
        return MalformedCall(text, str(exc))
    unknown = [call.name for call in calls if tools is not None and call.name not in tools]
    if unknown:
        # A small model "calls" made-up tools (`{"name": "joke", …}`) to answer in JSON.
        return MalformedCall(text, f"calls {unknown[0]!r}, which is not a tool offered")
    return ToolCalls(calls)


_TOO_DEEP = "JSON nested deeper than Python's parser reads"


def _unwrapped(text: str) -> str:
    """`text` (stripped) without the code fence or `<tool_call>` tags around it."""
    # The tags are cut by hand: a lazy pattern for them retried a whitespace run
    # at every place in it, quadratic time on a model looping on spaces.
    if text.startswith(_OPEN_TAG):
        body = text[len(_OPEN_TAG) :].strip()
        return body.removesuffix(_CLOSE_TAG).strip()
    match = _FENCE.match(text)
    return match["body"].strip() if match else text


def _json_objects(body: str) -> list[JsonValue]:
    """The JSON values at the start of `body`, one after another; trailing prose is dropped."""
    values: list[JsonValue] = []
    position = 0
    while position < len(body) and body[position] == "{":
        try:
            value, position = _DECODER.raw_decode(body, position)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
        except RecursionError:
            raise ValueError(_TOO_DEEP) from None
        values.append(value)
        position = _skip_space(body, position)
    return values


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _call(value: JsonValue) -> TextCall:
    if not isinstance(value, dict):
        raise ValueError("a JSON value that is not an object")
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError('a JSON object without a "name" string')
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        arguments = _decoded_arguments(arguments)
    if not isinstance(arguments, dict):
        raise ValueError(f'the "arguments" of {name!r} are not a JSON object')
    return TextCall(name.strip(), arguments)


def _decoded_arguments(text: str) -> JsonValue:
    if not text.strip():
        return {}
    try:
        decoded: JsonValue = json.loads(text)
    except ValueError:
        raise ValueError("the arguments are a string that is not JSON") from None
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    return decoded
