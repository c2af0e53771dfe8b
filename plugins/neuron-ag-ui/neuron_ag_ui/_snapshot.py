"""MESSAGES_SNAPSHOT: a run's conversation as AG-UI messages, for the client to reconcile with.

A `RunAgentInput`'s `messages` are the conversation as the client holds it; a
MESSAGES_SNAPSHOT is the conversation as the agent holds it, and an AG-UI client
(`@ag-ui/client`, CopilotKit) takes it in place of its own list: a message of
the snapshot replaces the client's message of the same id, one the snapshot
lacks is dropped (its reasoning and activity messages aside, when the snapshot
has none). So the snapshot is the messages the run was sent, as sent, then the
messages the turn added to its session (its history append, the truth of what
the agent holds), each under the id the run's events gave it:

- a model answer: the id of its first text message, or of its first call
  streamed without one (a client keeps such a call in an assistant message of
  the call's id);
- a tool result: its TOOL_CALL_RESULT's message id;
- the model's thinking: its reasoning message's id.

What no event named gets a fresh id, and so does one whose id a message sent
already has (a model that numbers its calls afresh each turn reuses their ids):
each id names one message. An answer sent whole at the run's end that
the history holds as no message of its own (a typed answer given by a final-answer
tool) ends the snapshot under its text message's id.

AG-UI messages carry text here: images and documents are named in brackets,
never sent as base64; text that UTF-8 cannot carry (a lone surrogate) is
replaced. Nothing is cut short: the snapshot is as large as the run's messages.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from ag_ui.core import (
    AssistantMessage,
    FunctionCall,
    Message,
    MessagesSnapshotEvent,
    ReasoningMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from pydantic import JsonValue, ValidationError

from layer0 import (
    APPEND_HISTORY,
    Content,
    ContentBlock,
    CustomBlock,
    CustomEffect,
    HistoryAppend,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TurnOutput,
)
from neuron_tool.files import DOCUMENT_TYPE, document_of
from neuron_turn import RAW_TYPE, THINKING_TYPE, TOOL_FILES_TYPE, well_formed

_logger: Final = logging.getLogger("neuron_ag_ui")


@dataclass(slots=True)
class _Answer:
    """What a run's events sent of one model answer."""

    ids: list[str] = field(default_factory=list)
    """The ids of the client messages it made, in order (text messages, parent-less calls)."""
    reasoning: list[str] = field(default_factory=list)
    """Its reasoning messages' ids, in order."""
    calls: bool = False
    whole: str | None = None
    """Its text, when sent whole at the run's end (the orchestrator did not stream)."""


class StreamedIds:
    """The message ids a run's events gave the client, for the snapshot's messages to keep."""

    def __init__(self) -> None:
        """Nothing sent yet."""
        self._answers: list[_Answer] = []
        self._answer_of: dict[str, _Answer] = {}  # call id -> the answer that made it
        self._results: dict[str, str] = {}  # call id -> its TOOL_CALL_RESULT's message id

    def answer(self) -> None:
        """A model answer begins: what follows is sent of it."""
        self._answers.append(_Answer())

    def whole(self, text: str) -> None:
        """The answer's `text` is sent whole, at the run's end."""
        self._answers.append(_Answer(whole=text))

    def text(self, message_id: str) -> None:
        """A text message `message_id` was started."""
        self._current().ids.append(message_id)

    def reasoning(self, message_id: str) -> None:
        """A reasoning message `message_id` was started."""
        self._current().reasoning.append(message_id)

    def call(self, call_id: str, parent: str | None) -> None:
        """A TOOL_CALL_START for `call_id` was sent, in the assistant message `parent`."""
        answer = self._current()
        answer.calls = True
        if parent is None:
            answer.ids.append(call_id)
        self._answer_of.setdefault(call_id, answer)

    def result(self, call_id: str, message_id: str) -> None:
        """A TOOL_CALL_RESULT for `call_id` was sent as the tool message `message_id`."""
        self._results[call_id] = message_id

    def result_id(self, call_id: str) -> str | None:
        """The id of the tool message sent with `call_id`'s result, if one was."""
        return self._results.get(call_id)

    def matched(self, messages: Sequence[Sequence[ContentBlock]]) -> list[_Answer | None]:
        """The answer each of the history's assistant `messages` was sent as (None: not sent).

        One with calls is the answer that made them. The others, text alone,
        pair with the answers sent without calls, from the end: a model answer
        the turn dropped (refused, retried) streamed before the one it kept.
        """
        found = [self._by_calls(blocks) for blocks in messages]
        taken = {id(answer) for answer in found if answer is not None}
        spare = [a for a in self._answers if not a.calls and a.ids and id(a) not in taken]
        textual = [index for index, answer in enumerate(found) if answer is None]
        for index, answer in zip(reversed(textual), reversed(spare), strict=False):
            found[index] = answer
        return found

    def unmatched_whole(self, matched: Sequence[_Answer | None]) -> list[tuple[str, str]]:
        """The (message id, text) of each answer sent whole that no history message matched."""
        taken = {id(answer) for answer in matched if answer is not None}
        return [
            (a.ids[0], a.whole)
            for a in self._answers
            if a.whole is not None and a.ids and id(a) not in taken
        ]

    def _by_calls(self, blocks: Sequence[ContentBlock]) -> _Answer | None:
        for block in blocks:
            if isinstance(block, ToolUseBlock) and block.id in self._answer_of:
                return self._answer_of[block.id]
        return None

    def _current(self) -> _Answer:
        if not self._answers:
            self._answers.append(_Answer())
        return self._answers[-1]


def messages_snapshot(
    sent: Sequence[Message], asked: bool, output: TurnOutput, ids: StreamedIds
) -> MessagesSnapshotEvent | None:
    """The MESSAGES_SNAPSHOT of a run: the messages `sent`, then those the turn added.

    `asked`: the run sent a new user message, which the turn's history holds
    first (and `sent` holds already); the tool messages ending `sent` answer
    calls whose results the history holds too. None when the output's history append
    does not read as a history: a wrong snapshot would make the client drop
    messages, so none is sent.
    """
    added = _added_messages(output)
    if added is None:
        return None
    if asked and added and added[0][0] == "user":
        added = added[1:]
    converter = _Converter(ids, _trailing_calls(sent), {m.id for m in sent})
    return MessagesSnapshotEvent(messages=[*sent, *converter.messages(added)])


def _trailing_calls(sent: Sequence[Message]) -> set[str]:
    """The calls the tool messages ending `sent` answer (an earlier one answered another turn)."""
    calls: set[str] = set()
    for message in reversed(sent):
        if not isinstance(message, ToolMessage):
            break
        calls.add(message.tool_call_id)
    return calls


def _added_messages(output: TurnOutput) -> list[tuple[str, list[ContentBlock]]] | None:
    """The (role, blocks) of the messages the turn's history appends hold, in order."""
    added: list[tuple[str, list[ContentBlock]]] = []
    for effect in output.effects:
        if not isinstance(effect, CustomEffect) or effect.effect_type != APPEND_HISTORY:
            continue
        try:
            stored = HistoryAppend.from_effect(effect).messages
            added += [_stored_message(message) for message in stored]
        except (ValueError, ValidationError) as exc:
            _logger.warning("a history append does not read; no MESSAGES_SNAPSHOT: %s", exc)
            return None
    return added


def _stored_message(message: JsonValue) -> tuple[str, list[ContentBlock]]:
    """A stored history message's role and blocks.

    Raises:
        ValueError: it is not `{"role": "user" | "assistant", "content": ...}`.
    """
    role = message.get("role") if isinstance(message, dict) else None
    if not isinstance(message, dict) or role not in ("user", "assistant"):
        raise ValueError("a stored message is not a user or assistant message")
    root = Content.model_validate(message.get("content")).root
    blocks: list[ContentBlock] = [TextBlock(text=root)] if isinstance(root, str) else list(root)
    return ("user" if role == "user" else "assistant"), blocks


class _Converter:
    """The turn's stored messages as AG-UI messages, under the ids the run's events used."""

    def __init__(self, ids: StreamedIds, answered: set[str], taken: set[str]) -> None:
        self._ids = ids
        self._answered = answered  # calls whose result the client sent: it holds them
        self._taken = set(taken)  # the ids of the messages so far
        self._out: list[Message] = []

    def messages(self, added: Sequence[tuple[str, list[ContentBlock]]]) -> list[Message]:
        """The AG-UI messages of the turn's `added` (role, blocks), each under its own id."""
        answers = iter(self._ids.matched([blocks for role, blocks in added if role == "assistant"]))
        matched: list[_Answer | None] = []
        for role, blocks in added:
            if role == "assistant":
                answer = next(answers)
                matched.append(answer)
                self._assistant(blocks, answer)
            else:
                self._user(blocks)
        for message_id, text in self._ids.unmatched_whole(matched):
            self._out.append(AssistantMessage(id=self._own(message_id), content=well_formed(text)))
        return self._out

    def _own(self, message_id: str | None) -> str:
        """`message_id` if no message has it yet (else, or without one, a fresh id), taken."""
        if message_id is None or message_id in self._taken:
            message_id = _new_id()
        self._taken.add(message_id)
        return message_id

    def _assistant(self, blocks: Sequence[ContentBlock], answer: _Answer | None) -> None:
        texts: list[str] = []
        calls: list[ToolCall] = []
        thoughts: list[str] = []
        for block in blocks:
            if isinstance(block, ToolUseBlock):
                calls.append(_tool_call(block))
            elif isinstance(block, CustomBlock) and block.content_type == THINKING_TYPE:
                thoughts += _thinking(block.data)
            else:
                texts.append(_text_of(block))
        known = answer.reasoning if answer is not None else []
        for index, thought in enumerate(thoughts):
            message_id = self._own(known[index] if index < len(known) else None)
            self._out.append(ReasoningMessage(id=message_id, content=well_formed(thought)))
        text = "".join(texts)
        if not text and not calls:
            return
        message_id = self._own(answer.ids[0] if answer is not None and answer.ids else None)
        self._out.append(
            AssistantMessage(id=message_id, content=text or None, tool_calls=calls or None)
        )

    def _user(self, blocks: Sequence[ContentBlock]) -> None:
        texts: list[str] = []
        for block in blocks:
            if isinstance(block, ToolResultBlock):
                self._flush(texts)
                self._tool_result(block)
            elif isinstance(block, CustomBlock) and block.content_type == TOOL_FILES_TYPE:
                self._files(block.data, texts)
            else:
                texts.append(_text_of(block))
        self._flush(texts)

    def _tool_result(self, block: ToolResultBlock) -> None:
        call = block.tool_use_id
        if call in self._answered:
            return
        content = well_formed(block.content)
        self._out.append(
            ToolMessage(
                id=self._own(self._ids.result_id(call)),
                tool_call_id=well_formed(call),
                content=content,
                error=content if block.is_error else None,
            )
        )

    def _files(self, data: JsonValue, texts: list[str]) -> None:
        """A result's files, named after its text (or among the user's, without the result)."""
        call = data.get("tool_use_id") if isinstance(data, dict) else None
        files = data.get("files") if isinstance(data, dict) else None
        named = "".join(_named_file(f) for f in files) if isinstance(files, list) else "[files]"
        last = self._out[-1] if self._out and not texts else None
        if isinstance(last, ToolMessage) and last.tool_call_id == call:
            self._out[-1] = last.model_copy(update={"content": f"{last.content}{named}"})
        elif call not in self._answered:
            texts.append(named)

    def _flush(self, texts: list[str]) -> None:
        text = "".join(texts)
        texts.clear()
        if text:
            self._out.append(UserMessage(id=self._own(None), content=text))


def _tool_call(block: ToolUseBlock) -> ToolCall:
    arguments = json.dumps(block.input, ensure_ascii=False)
    function = FunctionCall(name=well_formed(block.name), arguments=well_formed(arguments))
    return ToolCall(id=well_formed(block.id), function=function)


def _thinking(data: JsonValue) -> list[str]:
    thinking = data.get("thinking") if isinstance(data, dict) else None
    return [thinking] if isinstance(thinking, str) and thinking else []


def _text_of(block: ContentBlock) -> str:
    """A block as the text of an AG-UI message: text as itself, anything else named."""
    if isinstance(block, TextBlock):
        return well_formed(block.text)
    if isinstance(block, ImageBlock):
        return f"[image: {well_formed(block.media_type)}]"
    if isinstance(block, ToolResultBlock):
        return f"[tool result: {well_formed(block.content)}]"
    if isinstance(block, ToolUseBlock):
        return f"[tool call: {well_formed(block.name)}]"
    if block.content_type == RAW_TYPE:
        # A provider's opaque block (redacted thinking): nothing a person reads.
        return ""
    if block.content_type == DOCUMENT_TYPE:
        return _named_document(block.data)
    return f"[{well_formed(block.content_type)}]"


def _named_file(item: JsonValue) -> str:
    if isinstance(item, dict) and item.get("type") == "image":
        media_type = item.get("media_type")
        return f"[image: {well_formed(media_type) if isinstance(media_type, str) else 'unknown'}]"
    if isinstance(item, dict) and item.get("content_type") == DOCUMENT_TYPE:
        return _named_document(item.get("data"))
    return "[file]"


def _named_document(data: JsonValue) -> str:
    document = document_of(data)
    if document is None:
        return "[document]"
    _, media_type, name = document
    named = f"{well_formed(name)}, " if name else ""
    return f"[document: {named}{well_formed(media_type)}]"


def _new_id() -> str:
    return str(uuid.uuid4())
