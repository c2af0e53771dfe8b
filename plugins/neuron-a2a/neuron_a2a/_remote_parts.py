"""Between layer0 and a remote A2A agent: a turn's input becomes parts, a remote task an output.

The mirror of `_convert`, for `RemoteAgent`: what the server takes in, this
sends out (text, images, PDF documents, decisions); what the server sends
back (a completed task's `answer` artifact, an `input-required` task's list
of waiting calls, a failure's message), this reads, checking it: the remote
is untrusted.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Final

from a2a.types import Artifact, Message, Part, Task
from pydantic import JsonValue, ValidationError

from layer0 import (
    Base64Source,
    Content,
    ContentBlock,
    CustomBlock,
    CustomEffect,
    HistoryAppend,
    ImageBlock,
    LogEffect,
    LogLevel,
    SessionId,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TurnMetadata,
    TurnOutput,
)
from neuron_tool.files import DOCUMENT_TYPE, document_of
from neuron_turn import AWAITING_APPROVAL, OUTPUT_CONTENT_TYPE, Decision, PendingCall

from ._convert import DECISIONS_KEY, PENDING_KEY, _media_type, data_part, plain_json, text_part

_CONTEXT_CHARS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.:-"
)
_MAX_CONTEXT: Final = 128
_ESCAPE: Final = "_"
_ANSWER_ARTIFACT: Final = "answer"
_REMOTE_TEXT_CHARS: Final = 2000
_OUTPUT_NAME: Final = "a2a"


class PartError(ValueError):
    """What in a turn's input or a remote's answer does not fit, said for the error message."""


def context_of(session: SessionId | None, prefix: str) -> str | None:
    """The A2A context id of `session`: `prefix` + the session, escaped (None: no session).

    A context id is 1 to 128 letters, digits or `._:-`; any other character of
    the session (a delegation's `/`, say) is written `_xx` per UTF-8 byte, and
    `_` itself `_5f`, so two sessions never share a context.

    Raises:
        PartError: the context id would be longer than 128 characters.
    """
    if session is None:
        return None
    escaped = "".join(_escaped(c) for c in prefix + session)
    if not 1 <= len(escaped) <= _MAX_CONTEXT:
        raise PartError(
            f"the session {_shown(session)} makes a context id of {len(escaped)} characters;"
            f" an A2A server takes 1 to {_MAX_CONTEXT} (a shorter session id or prefix fits)"
        )
    return escaped


def _escaped(char: str) -> str:
    if char in _CONTEXT_CHARS:
        return char
    return "".join(f"{_ESCAPE}{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))


def input_parts(content: Content) -> list[Part]:
    """The parts of a message carrying `content`: text, images, PDF documents.

    Raises:
        PartError: a block A2A has no part for (a tool call or result, an unknown
            custom block), or a file given by URL (a server takes files by bytes).
    """
    root = content.root
    if isinstance(root, str):
        return [text_part(root)]
    parts = [_part(block, index) for index, block in enumerate(root)]
    return parts or [text_part("")]


def _part(block: ContentBlock, index: int) -> Part:
    if isinstance(block, TextBlock):
        return text_part(block.text)
    if isinstance(block, ImageBlock):
        if not isinstance(block.source, Base64Source):
            raise PartError(f"block {index} is an image by URL; send its bytes (base64)")
        return Part(raw=_decoded(block.source.data, index), media_type=block.media_type)
    if isinstance(block, CustomBlock) and block.content_type == DOCUMENT_TYPE:
        document = document_of(block.data)
        if document is None:
            raise PartError(f"block {index} is a malformed document")
        source, media_type, name = document
        if not isinstance(source, Base64Source):
            raise PartError(f"block {index} is a document by URL; send its bytes (base64)")
        return Part(raw=_decoded(source.data, index), media_type=media_type, filename=name or "")
    kind = block.content_type if isinstance(block, CustomBlock) else block.type
    raise PartError(f"block {index} is of kind {_shown(kind)}, which A2A has no part for")


def _decoded(data: str, index: int) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise PartError(f"block {index} holds base64 that does not decode") from None


def decisions_part(decisions: Sequence[Decision]) -> Part:
    """The follow-up's data part: `{"decisions": [...]}`, each a `Decision` in its JSON form."""
    listed: list[JsonValue] = [d.model_dump(mode="json") for d in decisions]
    return data_part({DECISIONS_KEY: listed})


# --- the remote's task ------------------------------------------------------------------


def answer_output(
    task: Task | Message, metadata: TurnMetadata, hidden: Callable[[str], str] = str
) -> TurnOutput:
    """A completed task's (or a direct message's) answer as a complete `TurnOutput`.

    The text is the `answer` artifact's (every artifact's, joined, when there is
    none of that name); a data part becomes the typed value `output_value` reads
    (several: a list of them); an image comes as an image block, another file
    is named in the text. `hidden` is applied to the text and to every string of
    the data (a remote echoing the token must not hand it to the caller's model).

    Raises:
        PartError: a part of the answer cannot be read.
    """
    parts = list(task.parts) if isinstance(task, Message) else _answer_parts(task.artifacts)
    texts: list[str] = []
    values: list[JsonValue] = []
    images: list[ContentBlock] = []
    for part in parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "data":
            values.append(_hidden_in(plain_json(part.data), hidden))
        elif kind == "raw" and _media_type(part.raw) not in (None, "application/pdf"):
            media = _media_type(part.raw) or ""
            source = Base64Source(data=base64.b64encode(part.raw).decode("ascii"))
            images.append(ImageBlock(source=source, media_type=media))
        elif kind in ("raw", "url"):
            texts.append(f"[a file the remote agent sent is not shown: {_shown(part.filename)}]")
    text = hidden("".join(texts))
    blocks: list[ContentBlock] = [TextBlock(text=text), *images]
    if values:
        value = values[0] if len(values) == 1 else values
        if not text:
            blocks[0] = TextBlock(text=json.dumps(value, ensure_ascii=False))
        blocks.append(
            CustomBlock(
                content_type=OUTPUT_CONTENT_TYPE, data={"name": _OUTPUT_NAME, "value": value}
            )
        )
    message = Content(text) if len(blocks) == 1 else Content(blocks)
    return TurnOutput(message=message, exit_reason="complete", metadata=metadata)


def _answer_parts(artifacts: Sequence[Artifact]) -> list[Part]:
    named = [a for a in artifacts if a.artifact_id == _ANSWER_ARTIFACT]
    return [part for artifact in (named or artifacts) for part in artifact.parts]


def _hidden_in(value: JsonValue, hidden: Callable[[str], str]) -> JsonValue:
    """`value` with `hidden` applied to each of its strings, keys too."""
    if isinstance(value, str):
        return hidden(value)
    if isinstance(value, list):
        return [_hidden_in(item, hidden) for item in value]
    if isinstance(value, dict):
        return {hidden(key): _hidden_in(item, hidden) for key, item in value.items()}
    return value


def status_text(task: Task, hidden: Callable[[str], str] = str) -> str:
    """The text of `task`'s status message, cut short (the remote's reason for its state).

    `hidden` is applied before the cut (so a secret it hides is never cut in two).
    """
    text = " ".join(p.text for p in task.status.message.parts if p.WhichOneof("content") == "text")
    text = hidden(text).strip()
    return text if len(text) <= _REMOTE_TEXT_CHARS else text[:_REMOTE_TEXT_CHARS] + "…"


def waiting_calls(task: Task) -> list[PendingCall] | None:
    """The calls an `input-required` task lists as waiting for approval (None: it lists none).

    Raises:
        PartError: the listing is there but malformed.
    """
    for part in task.status.message.parts:
        if part.WhichOneof("content") != "data":
            continue
        data = plain_json(part.data)
        listed = data.get(PENDING_KEY) if isinstance(data, dict) else None
        if listed is None:
            continue
        if not isinstance(listed, list) or not listed:
            raise PartError(f"{PENDING_KEY!r} is not a list of waiting calls")
        calls = []
        for index, entry in enumerate(listed):
            try:
                calls.append(PendingCall.model_validate(entry))
            except ValidationError:
                raise PartError(
                    f"waiting call {index} is not an object of a string id and name and an"
                    " input (and an agent)"
                ) from None
        return calls
    return None


def paused_output(calls: Sequence[PendingCall], text: str, metadata: TurnMetadata) -> TurnOutput:
    """A turn paused on the remote's waiting `calls`: what `pending_approvals` reads.

    The same form as a `NeuronTurn`'s pause (exit `AWAITING_APPROVAL`, a log
    effect listing the calls), so a delegating turn and an orchestrator pause on it.
    """
    listed: list[JsonValue] = [c.model_dump(mode="json", exclude_none=True) for c in calls]
    effect = LogEffect(
        level=LogLevel.INFO,
        message=f"awaiting approval of {len(calls)} tool call(s) of the remote agent: "
        + ", ".join(c.name for c in calls),
        data={PENDING_KEY: listed},
    )
    return TurnOutput(
        message=Content(text),
        exit_reason=AWAITING_APPROVAL,
        metadata=metadata,
        effects=[effect],
    )


def _shown(text: str, limit: int = 80) -> str:
    cut = text if len(text) <= limit else text[:limit] + "…"
    return json.dumps(cut)


# --- the session's record of the exchange ----------------------------------------------


def exchange_effect(
    session: SessionId,
    asked: Content | Sequence[Decision],
    answered: TurnOutput,
    calls: Sequence[PendingCall] = (),
) -> CustomEffect:
    """The history append recording one exchange with the remote in the local `session`.

    Why: a delegating `NeuronTurn` finds the calls a paused delegated agent
    waits on in that agent's session history, and a remote agent has none of
    its own; so the exchange is kept as a turn's would be: the message (or the
    decisions, as the waiting calls' results), then the answer (or the calls
    the remote now waits on, unanswered). Text only for the answer: the remote
    keeps the conversation itself.
    """
    if isinstance(asked, Content):
        first: JsonValue = {"role": "user", "content": asked.model_dump(mode="json")}
    else:
        results: list[ContentBlock] = [
            ToolResultBlock(
                tool_use_id=d.id,
                content=_decided(d),
                is_error=d.decision == "deny" or d.is_error,
            )
            for d in asked
        ]
        first = {"role": "user", "content": Content(results).model_dump(mode="json")}
    if calls:
        uses: list[ContentBlock] = [
            ToolUseBlock(id=c.id, name=c.name, input=c.input) for c in calls
        ]
        answer = Content(uses)
    else:
        answer = Content(answered.message.as_text() or "")
    second: JsonValue = {"role": "assistant", "content": answer.model_dump(mode="json")}
    append = HistoryAppend(session=session, turn_id=uuid.uuid4().hex, messages=[first, second])
    return append.effect()


def _decided(decision: Decision) -> str:
    if decision.decision == "approve":
        return "Approved by a person; the remote agent ran the call"
    if decision.decision == "answer":
        # An external call's result, as the model reads it: a string as it is, else JSON.
        output = decision.output
        return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return f"Denied by a person: {decision.reason or 'no reason given'}"
