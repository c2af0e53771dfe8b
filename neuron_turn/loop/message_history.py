"""A conversation kept in code: `run(message_history=...)` and `RunResult.all_messages()`.

A state store is where a session's history lives when an orchestrator runs the
turn (`session=`). A script, a test or a web handler that keeps its own
conversation passes it in instead, as pydantic-ai's `message_history=` does:
`again = await turn.run("And in May?", message_history=result.all_messages())`.
The messages are the ones a store would hold (`ProviderMessage`), and their JSON
(`messages_to_json`) is the stored history's own form, layer0 `Content` per
message, so a conversation moves between code, a file and a store unchanged.

Given history comes from outside the run (a file, a request, another process):
`check_history` refuses what a run cannot go on from before any model call.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any, Final, cast

from pydantic import JsonValue

from layer0 import (
    Base64Source,
    HistoryAppend,
    HistoryConflict,
    HistoryStore,
    SessionId,
    StateReader,
    UrlSource,
)

from ._convert import HistoryFormatError, history_from_json, history_to_json
from ._nesting import MAX_INPUT_DEPTH
from ._stored_history import read_history
from .provider import (
    ContentPart,
    DocumentPart,
    ImagePart,
    ProviderMessage,
    RawPart,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)

__all__ = [
    "MessageHistoryError",
    "SessionNotEmptyError",
    "check_history",
    "messages_from_json",
    "messages_to_json",
    "save_messages",
    "session_messages",
    "settled",
]

_ROLES: Final = ("user", "assistant")


class MessageHistoryError(ValueError):
    """A message history given to a run, or read from JSON, is not one a run can go on from."""


class SessionNotEmptyError(MessageHistoryError):
    """`save_messages` was given a session that already holds a history; nothing was written."""

    def __init__(self, session: SessionId) -> None:
        """`session` holds a history."""
        self.session = session
        super().__init__(
            f"session {session!r} already holds a history; messages are saved into a new "
            "session only (name another, or forget this one first); nothing was written"
        )


async def session_messages(state: StateReader, session: SessionId) -> list[ProviderMessage]:
    """The messages `session`'s stored history holds, as `RunResult.all_messages()` gives them.

    The Agents SDK's `session.get_items()`: a conversation an orchestrator kept, to
    go on with in code (`run(..., message_history=...)`) or to show. Empty: none.

    Raises:
        layer0.ContextAssemblyError: the stored history does not parse.
        layer0.NonRetryableError: the store judged the read (a corrupt file).
        layer0.RetryableError: the store failed otherwise.
    """
    return settled(await read_history(state, session))


async def save_messages(
    store: HistoryStore, session: SessionId, messages: Sequence[ProviderMessage]
) -> int:
    """Write a conversation kept in code into the new session `session`; return its length.

    Runs on `session` (`run(..., session=...)`, `neuron-turn run --session`) then go on
    from it. One append expecting an empty history: all of it is written or nothing.

    Raises:
        MessageHistoryError: an item is no message of a history (see `check_history`).
        SessionNotEmptyError: `session` already holds a history (also one written meanwhile).
        layer0.WriteFailed: the store refused; nothing was written.
    """
    checked = check_history(messages)
    append = HistoryAppend(
        session=session,
        turn_id=f"saved-{uuid.uuid4().hex}",
        messages=history_to_json(checked),
        expected_length=0,
    )
    try:
        return await store.append_history(append)
    except HistoryConflict:
        raise SessionNotEmptyError(session) from None


def messages_to_json(messages: Sequence[ProviderMessage]) -> bytes:
    """Return `messages` as JSON, the form a session's stored history has.

    Raises:
        MessageHistoryError: an item is no message a history holds (see `check_history`).
    """
    return json.dumps(history_to_json(check_history(messages)), ensure_ascii=False).encode()


def messages_from_json(data: str | bytes | bytearray) -> list[ProviderMessage]:
    """Read messages `messages_to_json` wrote (or a store's stored history, as JSON).

    Raises:
        MessageHistoryError: `data` is not JSON, or not a list of messages (named where).
    """
    try:
        value: JsonValue = json.loads(data)
    except (ValueError, RecursionError) as exc:
        # json raises ValueError (JSONDecodeError, UnicodeDecodeError) on what is not JSON.
        raise MessageHistoryError(f"the message history is not JSON: {exc}") from exc
    try:
        return settled(history_from_json(value))
    except HistoryFormatError as exc:
        raise MessageHistoryError(f"the message history does not parse: {exc}") from exc


def settled(messages: Iterable[ProviderMessage]) -> list[ProviderMessage]:
    """`messages` as a history holds them, so equal conversations compare equal.

    The loop builds some messages' parts as lists and some as tuples, and keeps a
    call it refused or answered unrun as a subclass of `ToolUsePart` of its own;
    a caller comparing a history read back from JSON with the run's own sees one
    form: parts in a tuple, each of its public part type.
    """
    return [
        m
        if type(m.content) is tuple and all(type(p) in _FIELDS for p in m.content)
        else ProviderMessage(m.role, tuple(_public(p) for p in m.content), m.pinned)
        for m in messages
    ]


def _public(part: ContentPart) -> ContentPart:
    """`part` as its public part type (a loop's own subclass of one, as that one)."""
    kind = _part_type(part)
    if kind is None or kind is type(part):
        return part
    return cast(ContentPart, kind(*(getattr(part, f.name) for f in fields(kind))))


def _part_type(part: object) -> type | None:
    """The public part type `part` is of (None: it is no part)."""
    return next((kind for kind in type(part).__mro__ if kind in _FIELDS), None)


def check_history(messages: object) -> list[ProviderMessage]:
    """Return `messages` as a list once each is a user or assistant message of known parts.

    Raises:
        MessageHistoryError: `messages` is no sequence of messages; the error names the
            first item that is not one, and why.
    """
    if isinstance(messages, str | bytes | bytearray) or not isinstance(messages, Sequence):
        raise MessageHistoryError(
            "message_history must be a sequence of ProviderMessage (as "
            "RunResult.all_messages() returns), not "
            f"{type(messages).__name__}; JSON is read with messages_from_json"
        )
    checked = list(messages)
    for index, message in enumerate(checked):
        problem = _problem(message)
        if problem is not None:
            raise MessageHistoryError(f"message_history[{index}] {problem}")
    return checked


def _problem(message: object) -> str | None:
    """What makes `message` no message of a history (None: it is one)."""
    if not isinstance(message, ProviderMessage):
        return f"is a {type(message).__name__}, not a ProviderMessage"
    if message.role not in _ROLES:
        # The turn's instructions are its system prompt; a history never stores one.
        return f"has the role {message.role!r}; a history holds user and assistant messages"
    pinned: object = message.pinned
    if type(pinned) is not bool:
        return f"has pinned={pinned!r}; it is True or False"
    content: object = message.content  # typed, but a caller's object may hold anything
    if isinstance(content, str | bytes) or not isinstance(content, Sequence):
        return f"has content of type {type(content).__name__}, not a sequence of parts"
    for position, part in enumerate(content):
        if _part_type(part) is None:
            return f"holds a {type(part).__name__} at content[{position}], which is no part"
        wrong = _wrong_field(part)
        if wrong is not None:
            return f"holds a {type(part).__name__} at content[{position}] whose {wrong}"
    return None


def _wrong_field(part: ContentPart) -> str | None:
    """The field of `part` that holds what its type does not take, described (None: none).

    Why by hand: the parts are plain dataclasses, which nothing checks when made, and
    a wrong field would fail the run halfway or its JSON after the model was paid.
    """
    kind = _part_type(part)
    assert kind is not None  # `_problem` refused what is no part
    for name, kinds in _FIELDS[kind]:
        value = getattr(part, name)
        if not isinstance(value, kinds):
            return f"{name} is {type(value).__name__}: {value!r:.40}"
    if isinstance(part, ToolUsePart | RawPart):
        value = part.input if isinstance(part, ToolUsePart) else part.data
        if not _is_json(value, MAX_INPUT_DEPTH):
            return f"{'input' if isinstance(part, ToolUsePart) else 'data'} is not JSON"
    if isinstance(part, ToolResultPart) and not all(
        isinstance(file, ImagePart | DocumentPart) and _wrong_field(file) is None
        for file in part.files
    ):
        return "files hold what is no image or document"
    return None


def _is_json(value: object, depth: int) -> bool:
    """Whether `value` is JSON (str keys, JSON values) nested at most `depth` deep."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if depth < 1:
        return False
    if isinstance(value, list):
        return all(_is_json(item, depth - 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v, depth - 1) for k, v in value.items())
    return False


_TEXT: Final = str
_OPTIONAL_TEXT: Final = (str, type(None))
_SOURCE: Final = (Base64Source, UrlSource)
_FIELDS: Final[dict[type, tuple[tuple[str, Any], ...]]] = {
    TextPart: (("text", _TEXT),),
    ToolUsePart: (("id", _TEXT), ("name", _TEXT)),
    ToolResultPart: (
        ("tool_use_id", _TEXT),
        ("content", _TEXT),
        ("is_error", bool),
        ("files", tuple),
    ),
    ThinkingPart: (("thinking", _TEXT), ("signature", _OPTIONAL_TEXT)),
    ImagePart: (("source", _SOURCE), ("media_type", _TEXT)),
    DocumentPart: (("source", _SOURCE), ("media_type", _TEXT), ("name", _OPTIONAL_TEXT)),
    RawPart: (("provider", _TEXT),),
}
"""Each part's fields a check can read, with the types they take."""
