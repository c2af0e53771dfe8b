r"""Values the wire can carry: lone surrogates and non-finite numbers replaced as they arrive.

A JSON escape such as `"\ud800"` gives Python a string holding half of a
UTF-16 surrogate pair, and a tool that decodes bytes with `surrogateescape`
(file names, subprocess output) returns such strings too. No UTF-8 encoder
takes one: pydantic could not write the turn's output, a store could not
save the history, and the Rust reference cannot hold one at all, so the turn
would fail at its end and lose everything it did. Each lone surrogate is
replaced by U+FFFD, as a UTF-8 decoder replaces bytes it cannot read, in the
model's answer (text, thinking, tool-call ids, names and arguments, keys
included), in what is streamed of it and in tool results (the names and media
types of the files a tool returned too: a file name from the OS may hold them).

JSON has no NaN or infinity either, though Python's parser reads `NaN` and
`Infinity` in a model's arguments: pydantic writes them as null and a strict
store (SQLite's) refuses them, which lost the turn's whole history. In
arguments they become null, as the layer0 wire writes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypeAlias, TypeVar, cast

from pydantic_core import PydanticSerializationError, to_json

from .events import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from .provider import (
    ContentPart,
    DocumentPart,
    ImagePart,
    RawPart,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)

__all__ = [
    "StreamDelta",
    "well_formed",
    "well_formed_content",
    "well_formed_delta",
    "well_formed_json",
    "well_formed_part",
]

_T = TypeVar("_T")

StreamDelta: TypeAlias = TextDelta | ThinkingDelta | ToolCallStart | ToolCallDelta
"""A piece of the model's answer as a provider streams it."""


def well_formed(text: str) -> str:
    """Return `text` with each lone surrogate replaced by U+FFFD; `text` itself when it has none.

    A surrogate pair held as two code points becomes the character it encodes.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def well_formed_json(value: _T) -> _T:
    """Return `value` with its strings (keys too) well formed and NaN or infinity as None.

    `value` itself when nothing needed replacing.

    Recursive: give it values no deeper than `MAX_INPUT_DEPTH` (the loop refuses deeper ones first).
    """
    if isinstance(value, str):
        return cast(_T, well_formed(value))
    if isinstance(value, float) and not math.isfinite(value):
        return cast(_T, None)
    if isinstance(value, dict):
        pairs = [(_key(key), well_formed_json(item)) for key, item in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)):
            return value
        return cast(_T, dict(pairs))
    if isinstance(value, list | tuple):
        items = [well_formed_json(item) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return cast(_T, items if isinstance(value, list) else tuple(items))
    return value


def _key(key: Any) -> Any:
    return well_formed(key) if isinstance(key, str) else key


def _carried_as_is(value: object) -> bool:
    """Whether `value` is JSON the wire carries unchanged: the common case, by one native call."""
    try:
        raw = to_json(value)
    except PydanticSerializationError:
        return False  # a lone surrogate, or an object the walk leaves to validation
    # A non-finite number comes out as a bare NaN or Infinity. Text holding those
    # words matches too, and only costs the walk, which then changes nothing.
    return b"NaN" not in raw and b"Infinity" not in raw


def well_formed_part(part: ContentPart) -> ContentPart:
    """Return `part` with its text well formed; `part` itself when it already is."""
    if isinstance(part, TextPart):
        text = well_formed(part.text)
        return part if text is part.text else replace(part, text=text)
    if isinstance(part, ToolUsePart):
        call_id, name = well_formed(part.id), well_formed(part.name)
        arguments = part.input if _carried_as_is(part.input) else well_formed_json(part.input)
        if call_id is part.id and name is part.name and arguments is part.input:
            return part
        return replace(part, id=call_id, name=name, input=arguments)
    if isinstance(part, ToolResultPart):
        content, files = well_formed(part.content), _well_formed_files(part.files)
        if content is part.content and files is part.files:
            return part
        return replace(part, content=content, files=files)
    if isinstance(part, ImagePart | DocumentPart):
        return _well_formed_file(part)
    if isinstance(part, ThinkingPart):
        thinking = well_formed(part.thinking)
        return part if thinking is part.thinking else replace(part, thinking=thinking)
    if isinstance(part, RawPart) and not _carried_as_is(part.data):
        return replace(part, data=well_formed_json(part.data))
    return part


def _well_formed_files(
    files: tuple[ImagePart | DocumentPart, ...],
) -> tuple[ImagePart | DocumentPart, ...]:
    """`files` with each one's name and media type well formed; `files` itself when they are."""
    fixed = tuple(_well_formed_file(file) for file in files)
    return files if all(a is b for a, b in zip(fixed, files, strict=True)) else fixed


def _well_formed_file(file: ImagePart | DocumentPart) -> ImagePart | DocumentPart:
    media_type = well_formed(file.media_type)
    if isinstance(file, ImagePart):
        return file if media_type is file.media_type else replace(file, media_type=media_type)
    name = None if file.name is None else well_formed(file.name)
    if media_type is file.media_type and name is file.name:
        return file
    return replace(file, media_type=media_type, name=name)


def well_formed_content(content: Sequence[ContentPart]) -> Sequence[ContentPart]:
    """Return `content` with every part's text well formed; `content` itself when it is.

    The identity tells the loop whether the response must be copied.
    """
    repaired: list[ContentPart] | None = None
    for index, part in enumerate(content):
        fixed = well_formed_part(part)
        if fixed is not part:
            repaired = list(content) if repaired is None else repaired
            repaired[index] = fixed
    return content if repaired is None else repaired


def well_formed_delta(delta: StreamDelta) -> StreamDelta:
    """Return a streamed piece of the answer with its text well formed; itself when it is."""
    if isinstance(delta, TextDelta | ThinkingDelta):
        text = well_formed(delta.text)
        return delta if text is delta.text else replace(delta, text=text)
    call_id = well_formed(delta.id)
    if isinstance(delta, ToolCallStart):
        name = well_formed(delta.name)
        if call_id is delta.id and name is delta.name:
            return delta
        return replace(delta, id=call_id, name=name)
    arguments = well_formed(delta.arguments)
    if call_id is delta.id and arguments is delta.arguments:
        return delta
    return replace(delta, id=call_id, arguments=arguments)
