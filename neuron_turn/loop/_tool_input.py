"""Tool calls the loop will not carry as sent: fixed or refused on arrival.

A model's arguments end up in hook contexts, the stored history and the
turn's output, all layer0 JSON, which pydantic validates only to about 250
levels and the Rust reference reads only to 128. Arguments nested deeper
than `MAX_INPUT_DEPTH` are therefore replaced, the moment the response
arrives, by an empty object and an error the model reads as the call's
result, so nothing a model sends can crash the turn further down. A
provider-specific block (`RawPart`) nested that deep has no call to answer:
the answer cannot be used, a `ModelError` saying why.

Every call gets an id no other call of the conversation has. Results,
approvals and the model APIs find a call by its id; two calls sharing one (a
hostile model, or a compatible server that numbers the calls of every answer
from `call_0`), or an empty id, would let one call's result or decision stand
for another's, and Anthropic refuses a conversation whose `tool_use` ids
repeat. A repeated or empty id is replaced, in the history as in the result,
by the id with a suffix no call has (`c1_1`; `call_1` for an empty one), and
a streamed call is shown under that id from its start (`StreamedCallIds`), so
a stream's ids are those its tool events and the history use.

Arguments that are not a JSON object (text that did not parse, a list) are
refused the same way, kept as `{}`: every tool takes an object, and Anthropic
refuses a `tool_use` whose input is not one.

A call naming a tool by a name no tool can have (`functions.search`, `web
search`) is refused like any unknown tool, under a name every model API
takes: the name as sent would make OpenAI refuse the rest of the session.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from layer0 import ModelError
from neuron_tool import is_tool_name

from ._nesting import MAX_INPUT_DEPTH, deeper_than
from ._well_formed import well_formed
from .events import ToolCallDelta, ToolCallStart, TurnEvent
from .provider import ContentPart, ProviderMessage, RawPart, ToolUsePart


@dataclass(frozen=True, slots=True)
class RefusedCall(ToolUsePart):
    """A tool call whose arguments were refused; the tool round answers `refusal` unrun."""

    refusal: str = ""


@dataclass(frozen=True, slots=True)
class AnsweredCall(ToolUsePart):
    """A tool call answered already; the tool round answers `answer` unrun.

    A resumed `delegate` call whose agent went on without the turn: its answer.
    """

    answer: str = ""


@dataclass(frozen=True, slots=True)
class CallerAnswered(AnsweredCall):
    """An external tool's call the turn's caller carried out: `answer` is its output.

    Answered unrun like any `AnsweredCall`; the `post_tool_use` hooks see it.
    """


@dataclass(frozen=True, slots=True)
class CallerFailed(RefusedCall):
    """An external tool's call the turn's caller says failed: `refusal` is its error.

    Answered unrun like any `RefusedCall`; the `post_tool_use` hooks see it.
    """


UNRUN: Final = (RefusedCall, AnsweredCall)
"""The calls a tool round answers without running anything."""
CALLER_ANSWERED: Final = (CallerAnswered, CallerFailed)
"""The calls of external tools answered by the turn's caller."""


def guard_tool_calls(content: Sequence[ContentPart], ids: set[str]) -> Sequence[ContentPart]:
    """Return `content` with each call's id not in `ids`, misnamed or too deep calls refused.

    `ids` holds the ids of the conversation's calls so far; the calls' ids are
    added to it. `content` itself when nothing changed (the common case), so
    the loop can tell by identity whether the response must be copied.

    Raises:
        ModelError: a provider-specific block nests deeper than `MAX_INPUT_DEPTH`.
    """
    guarded: list[ContentPart] | None = None
    suffixes: dict[str, int] = {}
    for index, part in enumerate(content):
        if isinstance(part, ToolUsePart):
            call_id = part.id
            # The common id (new, ASCII) without a call: this runs for every tool call.
            fresh = call_id and call_id.isascii() and call_id not in ids
            checked = _guarded(part if fresh else _own_id(part, ids, suffixes))
            ids.add(checked.id)
            if checked is not part:
                guarded = list(content) if guarded is None else guarded
                guarded[index] = checked
        elif isinstance(part, RawPart) and deeper_than(part.data, MAX_INPUT_DEPTH):
            raise ModelError(
                f"the answer holds a {part.provider!r} block nested deeper than "
                f"{MAX_INPUT_DEPTH} levels of objects and arrays"
            )
    return content if guarded is None else guarded


def _own_id(call: ToolUsePart, taken: set[str], suffixes: dict[str, int]) -> ToolUsePart:
    """`call` with an id no call in `taken` has: its own unless empty or taken."""
    own = _free_id(call.id, taken, suffixes)
    return call if own is call.id else replace(call, id=own)


def _free_id(call_id: str, taken: set[str], suffixes: dict[str, int]) -> str:
    """`call_id`, or with a suffix no id in `taken` has when it is empty or taken.

    Compared well formed, as it is kept: two ids differing only in lone surrogates
    become the same text. `suffixes` remembers, per id, the first suffix not yet
    tried (`taken` only grows): a model repeating one id in thousands of calls costs
    time in proportion to them, not to their square, which would stall the loop.
    """
    own = well_formed(call_id)
    if own and own not in taken:
        return own
    base = own or "call"
    suffix = suffixes.get(base, 1)
    while f"{base}_{suffix}" in taken:
        suffix += 1
    suffixes[base] = suffix + 1
    return f"{base}_{suffix}"


class StreamedCallIds:
    """A model call's stream sink that shows each call under the id the history will give it.

    Why: `guard_tool_calls` renames a repeated or empty id once the answer is
    whole; a stream shown under the id as sent would name one call by two ids
    (a frontend would add the new call's arguments to an earlier call of that
    id). Each call start takes its id as `guard_tool_calls` will, in the same
    order, from the ids the conversation had before the call.
    """

    __slots__ = ("_names", "_sink", "_suffixes", "_taken")

    def __init__(self, sink: Callable[[TurnEvent], None], taken: set[str]) -> None:
        """Pass `sink` the stream's events; `taken`: the conversation's call ids (copied)."""
        self._sink = sink
        self._taken = set(taken)
        self._names: dict[str, str] = {}
        self._suffixes: dict[str, int] = {}

    def __call__(self, event: TurnEvent) -> None:
        if isinstance(event, ToolCallStart):
            call_id = event.id
            fresh = call_id and call_id.isascii() and call_id not in self._taken
            named = call_id if fresh else _free_id(call_id, self._taken, self._suffixes)
            self._taken.add(named)
            self._names[call_id] = named
            if named != call_id:
                event = replace(event, id=named)
        elif isinstance(event, ToolCallDelta):
            named = self._names.get(event.id, event.id)
            if named != event.id:
                event = replace(event, id=named)
        self._sink(event)


def call_ids(messages: Iterable[ProviderMessage]) -> set[str]:
    """Return the ids of the tool calls in `messages`."""
    return {
        part.id for message in messages for part in message.content if isinstance(part, ToolUsePart)
    }


def _guarded(call: ToolUsePart) -> ToolUsePart:
    if not is_tool_name(call.name):
        return _misnamed(call)
    if deeper_than(call.input, MAX_INPUT_DEPTH):
        refusal = (
            f"Error: the arguments of this call to {call.name!r} nest deeper than "
            f"{MAX_INPUT_DEPTH} levels of objects and arrays, so the tool was not run; "
            "call it again with flatter arguments"
        )
        return RefusedCall(call.id, call.name, {}, refusal)
    if not isinstance(call.input, dict):
        return _not_an_object(call)
    return call


def _not_an_object(call: ToolUsePart) -> RefusedCall:
    """`call` refused for arguments that are not an object, kept with `{}` for them.

    Every tool takes an object (the APIs accept no other input schema), and
    Anthropic refuses a `tool_use` whose input is not one: kept as sent, the
    arguments would fail every later request of a session that moves there.
    The error quotes them, so the model sees what it sent.
    """
    sent = call.input
    if isinstance(sent, str):
        # A provider keeps arguments that do not parse as their raw text.
        what, shown = "are not valid JSON", sent
    else:
        what, shown = "are not a JSON object", json.dumps(sent, ensure_ascii=False, default=repr)
    if len(shown) > _SHOWN:
        shown = f"{shown[:_SHOWN]}..."
    refusal = (
        f"Error: the arguments of this call to {call.name!r} {what}, so the tool was not "
        f"run: {shown}; call it again with an object of its arguments"
    )
    return RefusedCall(call.id, call.name, {}, refusal)


_SHOWN: Final = 200
"""How much of arguments that are not an object an error quotes."""


def _misnamed(call: ToolUsePart) -> RefusedCall:
    """`call` refused for a name no tool has, under a name the model APIs take.

    A registered tool's name is always one (`neuron_tool.is_tool_name`), so the call
    names no tool; kept as sent, the name would make the APIs that check names in the
    history (OpenAI does) refuse every later request of the session. The name kept
    is the one sent with `_` for what does not fit, cut to leave room for a digest
    of the whole name, so it names no tool either; the error quotes it as sent.
    """
    name = call.name if isinstance(call.name, str) else repr(call.name)
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    kept = f"{_NOT_IN_NAME.sub('_', name)[:51]}_{digest}"
    refusal = (
        f"Error: there is no tool named {well_formed(name)!r}: a tool's name is 1 to 64 "
        "letters, digits, '_' or '-'; call one of the tools offered"
    )
    return RefusedCall(call.id, kept, {}, refusal)


_NOT_IN_NAME: Final = re.compile(r"[^A-Za-z0-9_-]")
