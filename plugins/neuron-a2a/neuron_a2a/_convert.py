"""Between A2A and layer0: a message becomes a turn's content, a turn's output becomes parts.

What a remote sends is untrusted: every part is checked (kind, media type
against the file's own bytes, size) and refused with an error naming it,
never dropped, so the remote never believes the agent saw what it did not.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any, Final, cast

from a2a.types import Message, Part, Task, TaskState
from google.protobuf import json_format, struct_pb2
from pydantic import JsonValue, ValidationError

from layer0 import (
    Base64Source,
    Content,
    ContentBlock,
    ImageBlock,
    ObserverHalt,
    SessionId,
    TextBlock,
    TurnOutput,
)
from neuron_tool.files import image_type
from neuron_turn import (
    AWAITING_APPROVAL,
    GUARDRAIL_TRIPPED,
    Decision,
    OutputMissingError,
    PendingCall,
    answer_text,
    document_block,
    output_value,
    pending_approvals,
    stopped_reason,
)

from .errors import (
    EmptyMessageError,
    InvalidContextError,
    InvalidDecisionsError,
    MessageTooLargeError,
    UnsupportedPartError,
)
from .limits import MessageLimits

PENDING_KEY: Final = "awaiting_approval"
"""The key of the data part listing the calls an input-required task waits on."""
DECISIONS_KEY: Final = "decisions"
"""The key of the follow-up's data part holding the decisions."""

_CONTEXT_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
# The magic numbers of the files taken, so a part's declared media type is checked
# against its bytes: a model API refuses an image whose bytes are not what it says.
_ACCEPTED: Final = "PNG, JPEG, GIF or WebP images, or PDF documents"
# Limits exit as the turn's own kind; a refusal by a hook or guardrail is the agent's "no".
_REFUSALS: Final = (GUARDRAIL_TRIPPED,)


def session_of(context_id: str, prefix: str) -> SessionId:
    """The neuron session of the A2A context `context_id`: `prefix` + the id.

    Raises:
        InvalidContextError: the id is empty, longer than 128 characters, or holds
            characters other than letters, digits and `._:-`.
    """
    if _CONTEXT_ID.fullmatch(context_id) is None:
        raise InvalidContextError(
            "a context id must be 1 to 128 letters, digits or '._:-' (a UUID is fine);"
            f" got {_shown(context_id)}"
        )
    return prefix + context_id


def message_content(message: Message, limits: MessageLimits) -> Content:
    """The content of the A2A `message` for a turn: text, images, documents, data as JSON.

    Raises:
        EmptyMessageError: no parts, or nothing in them.
        UnsupportedPartError: a part of a kind or media type the agent cannot take.
        MessageTooLargeError: past one of `limits`.
    """
    parts = message.parts
    if len(parts) > limits.max_parts:
        raise MessageTooLargeError(
            f"the message has {len(parts)} parts; at most {limits.max_parts} are taken"
        )
    blocks: list[ContentBlock] = []
    chars = 0
    for index, part in enumerate(parts):
        block = _block(part, index, limits)
        if isinstance(block, TextBlock):
            chars += len(block.text)
            if chars > limits.max_text_chars:
                raise MessageTooLargeError(
                    f"the message's text is longer than {limits.max_text_chars} characters"
                )
        blocks.append(block)
    if not any(not isinstance(b, TextBlock) or b.text for b in blocks):
        raise EmptyMessageError("the message has no text, file or data in it")
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return Content(blocks[0].text)
    return Content(blocks)


def _block(part: Part, index: int, limits: MessageLimits) -> ContentBlock:
    kind = part.WhichOneof("content")
    if kind == "text":
        return TextBlock(text=part.text)
    if kind == "data":
        text = json.dumps(plain_json(part.data), ensure_ascii=False, separators=(",", ":"))
        return TextBlock(text=text)
    if kind == "raw":
        return _file_block(part, index, limits)
    if kind == "url":
        raise UnsupportedPartError(
            f"part {index} is a file given by URL, which is not fetched; send its bytes"
            f" ({_ACCEPTED})"
        )
    raise UnsupportedPartError(f"part {index} is empty: it holds no text, file or data")


def _file_block(part: Part, index: int, limits: MessageLimits) -> ContentBlock:
    data = part.raw
    if len(data) > limits.max_file_bytes:
        raise MessageTooLargeError(
            f"part {index} is a file of {len(data)} bytes; at most {limits.max_file_bytes}"
            " are taken"
        )
    sniffed = _media_type(data)
    declared = part.media_type.strip().lower()
    if sniffed is None:
        raise UnsupportedPartError(
            f"part {index}{_named(part)} is a file of type {_shown(declared or 'unknown')}"
            f" whose bytes are not one the agent takes; send {_ACCEPTED}"
        )
    if declared and declared != sniffed:
        raise UnsupportedPartError(
            f"part {index}{_named(part)} says it is {_shown(declared)} but its bytes are {sniffed}"
        )
    if sniffed == "application/pdf":
        return document_block(data, name=part.filename or None)
    source = Base64Source(data=base64.b64encode(data).decode("ascii"))
    return ImageBlock(source=source, media_type=sniffed)


def _media_type(data: bytes) -> str | None:
    """An image's or a PDF's media type, by its first bytes; None for anything else."""
    return "application/pdf" if data.startswith(b"%PDF-") else image_type(data)


def _named(part: Part) -> str:
    return f" ({_shown(part.filename)})" if part.filename else ""


def _shown(text: str, limit: int = 80) -> str:
    """`text` quoted for an error message: cut short, its control characters escaped."""
    cut = text if len(text) <= limit else text[:limit] + "…"
    return json.dumps(cut)


def plain_json(value: struct_pb2.Value) -> JsonValue:
    """A data part's value as plain JSON; whole numbers as ints (protobuf holds doubles)."""
    return _ints(json_format.MessageToDict(value))


def _ints(value: JsonValue) -> JsonValue:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: _ints(item) for key, item in value.items()}
    return value


def data_part(value: JsonValue) -> Part:
    """A data part holding `value`."""
    # ParseDict takes any JSON value for a `Value`, whatever its annotation says.
    return Part(data=json_format.ParseDict(cast(Any, value), struct_pb2.Value()))


def text_part(text: str) -> Part:
    """A text part holding `text`."""
    return Part(text=text)


# --- approvals -------------------------------------------------------------------------


def pending_listing(calls: Sequence[PendingCall]) -> JsonValue:
    """The data of the part listing the waiting calls: `{"awaiting_approval": [...]}`."""
    listed: list[JsonValue] = []
    for call in calls:
        entry: dict[str, JsonValue] = {"id": call.id, "name": call.name, "input": call.input}
        if call.agent is not None:
            entry["agent"] = call.agent
        if call.external:
            entry["external"] = True
        listed.append(entry)
    return {PENDING_KEY: listed}


def pending_parts(calls: Sequence[PendingCall]) -> list[Part]:
    """The status message of a task waiting for approval: what waits, and how to answer."""
    names = ", ".join(f"{call.name} ({call.id})" for call in calls)
    text = (
        f"Waiting for approval of {names}. Reply on this task with a data part"
        ' {"decisions": [{"call_id": "<id>", "approve": true}, or'
        ' {"call_id": "<id>", "approve": false, "reason": "<why>"}]}, one per call.'
    )
    if any(call.external for call in calls):
        text += (
            " A call marked external is yours to carry out: answer it with"
            ' {"id": "<id>", "decision": "answer", "output": <its result>} instead.'
        )
    return [text_part(text), data_part(pending_listing(calls))]


def waiting_calls(task: Task | None) -> list[str] | None:
    """The ids of the calls `task` waits on, read from its status; None if it waits on none."""
    if task is None or task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
        return None
    for part in task.status.message.parts:
        if part.WhichOneof("content") != "data":
            continue
        data = plain_json(part.data)
        listed = data.get(PENDING_KEY) if isinstance(data, dict) else None
        if isinstance(listed, list):
            return [str(c["id"]) for c in listed if isinstance(c, dict) and "id" in c]
    return None


def holds_decisions(message: Message) -> bool:
    """Whether `message` holds a data part `{"decisions": ...}`: it answers paused calls."""
    for part in message.parts:
        if part.WhichOneof("content") == "data":
            data = plain_json(part.data)
            if isinstance(data, dict) and DECISIONS_KEY in data:
                return True
    return False


def decisions_of(message: Message, waiting: Sequence[str]) -> list[Decision]:
    """The decisions a follow-up `message` holds for the calls `waiting` (their ids).

    The message holds one data part `{"decisions": [...]}` (text parts beside it
    are ignored); each entry is `{"call_id": ..., "approve": true}` (with
    `"input"` to run the call with an edited input), `{"call_id": ...,
    "approve": false, "reason": ...}`, or a `neuron_turn.Decision` in its own
    JSON form. Every waiting call is decided exactly once.

    Raises:
        InvalidDecisionsError: the message or its decisions do not fit, saying how.
    """
    found: list[JsonValue] = []
    for index, part in enumerate(message.parts):
        kind = part.WhichOneof("content")
        if kind == "text":
            continue
        data = plain_json(part.data) if kind == "data" else None
        if not isinstance(data, dict) or DECISIONS_KEY not in data:
            raise InvalidDecisionsError(
                f"part {index} is not a data part holding 'decisions'; this task waits for"
                f" decisions on {_ids(waiting)}"
            )
        found.append(data[DECISIONS_KEY])
    if len(found) != 1 or not isinstance(found[0], list):
        raise InvalidDecisionsError(
            f'this task waits for one data part {{"decisions": [...]}} deciding {_ids(waiting)}'
        )
    decisions = [_decision(entry, index) for index, entry in enumerate(found[0])]
    _check_fit(decisions, waiting)
    return decisions


def _decision(entry: JsonValue, index: int) -> Decision:
    if isinstance(entry, dict) and "decision" in entry:
        try:
            return Decision.model_validate(entry)
        except ValidationError as exc:
            raise InvalidDecisionsError(f"decision {index}: {_first_error(exc)}") from None
    if not isinstance(entry, dict):
        raise InvalidDecisionsError(f"decision {index} is not an object")
    unknown = sorted(set(entry) - {"call_id", "approve", "reason", "input"})
    if unknown:
        raise InvalidDecisionsError(f"decision {index} has unknown keys: {', '.join(unknown)}")
    call_id, approve = entry.get("call_id"), entry.get("approve")
    if not isinstance(call_id, str) or not isinstance(approve, bool):
        raise InvalidDecisionsError(
            f"decision {index} needs a string 'call_id' and a boolean 'approve'"
        )
    reason, edited = entry.get("reason"), entry.get("input")
    if approve:
        if reason is not None:
            raise InvalidDecisionsError(f"decision {index}: an approval takes no reason")
        return Decision.approve(call_id, edited)
    if edited is not None:
        raise InvalidDecisionsError(f"decision {index}: a denial takes no input")
    if reason is not None and not isinstance(reason, str):
        raise InvalidDecisionsError(f"decision {index}: 'reason' must be a string")
    return Decision.deny(call_id, reason or "denied by the remote agent")


def _check_fit(decisions: Sequence[Decision], waiting: Sequence[str]) -> None:
    ids = [d.id for d in decisions]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    unknown = sorted(set(ids) - set(waiting))
    missing = [i for i in waiting if i not in ids]
    problems = []
    if unknown:
        problems.append(f"no call waits with the id(s) {_ids(unknown)}")
    if repeated:
        problems.append(f"decided more than once: {_ids(repeated)}")
    if missing:
        problems.append(f"not decided: {_ids(missing)}")
    if problems:
        raise InvalidDecisionsError(
            "; ".join(problems) + f" (this task waits on {_ids(waiting)}); nothing was run"
        )


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(_shown(i, 64) for i in ids[:20]) + (" …" if len(ids) > 20 else "")


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


# --- answers ---------------------------------------------------------------------------


def answer_parts(output: TurnOutput) -> list[Part]:
    """The answer as parts: its text, and its typed value (if any) as a data part."""
    parts = [text_part(answer_text(output))]
    try:
        value = output_value(output)
    except OutputMissingError:
        return parts
    parts.append(data_part(value))
    return parts


def outcome(output: TurnOutput) -> tuple[TaskState, str | None]:
    """The task state a turn's exit reason maps to, with the reason to show (None: none).

    complete: completed. Waiting for approval: input-required. A hook's halt or a
    tripped guardrail: rejected (the agent's "no"). Any other (a limit, a
    timeout, an invalid output, an interruption): failed, saying which.
    """
    reason = output.exit_reason
    if reason == "complete":
        return TaskState.TASK_STATE_COMPLETED, None
    if reason == AWAITING_APPROVAL and pending_approvals(output):
        return TaskState.TASK_STATE_INPUT_REQUIRED, None
    if isinstance(reason, ObserverHalt):
        return TaskState.TASK_STATE_REJECTED, f"a hook stopped the turn: {reason.reason}"
    if reason in _REFUSALS:
        return TaskState.TASK_STATE_REJECTED, stopped_reason(output, "a guardrail tripped")[1]
    return TaskState.TASK_STATE_FAILED, stopped_reason(output)[1]
