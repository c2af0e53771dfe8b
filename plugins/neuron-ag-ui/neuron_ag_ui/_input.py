"""From an AG-UI `RunAgentInput` to the `TurnInput` to dispatch.

The server's session store is the truth about a thread's history, so only the
END of `messages` is read: the last user message is the new input, or the
trailing tool messages answer the calls the session waits on. Everything the
client sends is untrusted: ids, parts, tools and decisions are checked and
refused with an error naming what is wrong, never dropped.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from typing import Any, Final

from ag_ui.core import (
    DataSource,
    DocumentPart,
    ImagePart,
    ResumeEntry,
    RunAgentInput,
    TextPart,
    Tool,
    ToolMessage,
    UserMessage,
)
from pydantic import JsonValue, ValidationError

from layer0 import (
    Base64Source,
    Content,
    ContentBlock,
    ImageBlock,
    SessionId,
    TextBlock,
    TurnInput,
)
from neuron_tool import ExternalTool, is_tool_name
from neuron_tool.files import image_type
from neuron_turn import Decision, document_block, resume_input, with_external_tools

from .errors import (
    EmptyMessageError,
    InvalidDecisionsError,
    InvalidRunInputError,
    InvalidThreadError,
    MessageTooLargeError,
    UnsupportedPartError,
)
from .limits import RunLimits
from .state import RUN_KEY

DECISIONS_PROP: Final = "neuron_decisions"
"""The `forwardedProps` key holding decisions (`neuron_turn.Decision` JSON) for waiting calls."""

_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_ACCEPTED: Final = "text, PNG, JPEG, GIF or WebP images, or PDF documents, inline"


def parse_run(body: bytes) -> RunAgentInput:
    """The `RunAgentInput` of a request body.

    Raises:
        InvalidRunInputError: the body is not JSON, or not a `RunAgentInput`.
    """
    try:
        return RunAgentInput.model_validate_json(body)
    except ValidationError as exc:
        raise InvalidRunInputError(
            f"the body is not an AG-UI RunAgentInput: {_first_error(exc)}"
        ) from None


def session_of(run: RunAgentInput, prefix: str) -> SessionId:
    """The neuron session of the run's thread: `prefix` + the thread id.

    Raises:
        InvalidThreadError: the thread or run id is empty, longer than 128
            characters, or holds characters other than letters, digits and `._:-`.
    """
    for what, value in (("thread", run.thread_id), ("run", run.run_id)):
        if _ID.fullmatch(value) is None:
            raise InvalidThreadError(
                f"a {what} id must be 1 to 128 letters, digits or '._:-' (a UUID is fine);"
                f" got {_shown(value)}"
            )
    return prefix + run.thread_id


def turn_input(run: RunAgentInput, prefix: str, limits: RunLimits) -> TurnInput:
    """The turn input the run asks for: a new user message, or a resume of waiting calls.

    A resume when the run carries decisions: trailing `role: "tool"` messages
    (answers to frontend tool calls), `resume` entries (answers to interrupts),
    or `forwardedProps.neuron_decisions`. The run's `tools` are offered to the
    model as external tools (the client runs them).

    Raises:
        AgUiError: the run cannot be taken (a subclass says why).
    """
    session = session_of(run, prefix)
    tools = frontend_tools(run.tools or [], limits)
    decisions = [
        *_answers(trailing_tool_messages(run), limits),
        *_resumed(run.resume or []),
        *_forwarded(run.forwarded_props),
    ]
    last = run.messages[-1] if run.messages else None
    if decisions:
        if isinstance(last, UserMessage):
            raise InvalidDecisionsError(
                "a run that answers waiting calls carries no new user message; send the"
                " message in the next run"
            )
        input = resume_input(session, decisions)
    elif isinstance(last, UserMessage):
        input = TurnInput(message=user_content(last, limits), trigger="user", session=session)
    else:
        got = "no messages" if last is None else f"a {last.role!r} message"
        raise EmptyMessageError(f"the last message must be the user's (or tool results); got {got}")
    options = input.metadata if isinstance(input.metadata, dict) else {}
    input = input.model_copy(update={"metadata": {**options, RUN_KEY: run_info(run, limits)}})
    return with_external_tools(input, tools) if tools else input


def run_info(run: RunAgentInput, limits: RunLimits) -> dict[str, JsonValue]:
    """What the turn carries of the run: its ids, and the frontend's `state` and `context`.

    Raises:
        MessageTooLargeError: the state or the context past `limits`, or the
            state nested deeper than `limits.max_state_depth`.
    """
    info: dict[str, JsonValue] = {"thread_id": run.thread_id, "run_id": run.run_id}
    if run.state is not None:
        _check_state(run.state, limits)
        info["state"] = run.state
    if run.context:
        context: list[JsonValue] = [
            {"description": entry.description, "value": entry.value} for entry in run.context
        ]
        if len(json.dumps(context, ensure_ascii=False)) > limits.max_state_bytes:
            raise MessageTooLargeError(
                f"the run's context is larger than {limits.max_state_bytes} bytes as JSON"
            )
        info["context"] = context
    return info


def _check_state(state: Any, limits: RunLimits) -> None:
    if nested_deeper_than(state, limits.max_state_depth):
        raise MessageTooLargeError(
            f"the run's state nests deeper than {limits.max_state_depth} levels"
        )
    if len(json.dumps(state, ensure_ascii=False)) > limits.max_state_bytes:
        raise MessageTooLargeError(
            f"the run's state is larger than {limits.max_state_bytes} bytes as JSON"
        )


def nested_deeper_than(value: Any, depth: int) -> bool:
    """Whether JSON `value` nests lists and objects more than `depth` levels deep.

    Level by level, not recursively: a hostile value must not exhaust the stack.
    """
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    for _ in range(depth):
        if not level:
            return False
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
    return bool(level)


def trailing_tool_messages(run: RunAgentInput) -> list[ToolMessage]:
    """The `role: "tool"` messages at the end of `messages`, in order."""
    found: list[ToolMessage] = []
    for message in reversed(run.messages):
        if not isinstance(message, ToolMessage):
            break
        found.append(message)
    return found[::-1]


def frontend_tools(tools: Sequence[Tool], limits: RunLimits) -> list[ExternalTool]:
    """The client's tools as external tools: the model calls them, the client runs them.

    Raises:
        MessageTooLargeError: more than `limits.max_tools`.
        InvalidRunInputError: a name that is no tool name, a schema that is no object.
    """
    if len(tools) > limits.max_tools:
        raise MessageTooLargeError(
            f"the run declares {len(tools)} tools; at most {limits.max_tools} are taken"
        )
    external = []
    for index, tool in enumerate(tools):
        if not is_tool_name(tool.name):
            raise InvalidRunInputError(
                f"tools[{index}].name {_shown(tool.name)} is not a tool name (1-64 of A-Z a-z"
                " 0-9 _ -)"
            )
        schema = tool.parameters
        if schema is not None and not isinstance(schema, dict):
            raise InvalidRunInputError(f"tools[{index}].parameters must be a JSON Schema object")
        external.append(ExternalTool(tool.name, tool.description, schema))
    return external


def user_content(message: UserMessage, limits: RunLimits) -> Content:
    """The content of the user's message for a turn: its text, images and PDF documents.

    Raises:
        EmptyMessageError: nothing in it.
        UnsupportedPartError: a part the agent cannot take (audio, video, by URL, …).
        MessageTooLargeError: past one of `limits`.
    """
    parts = message.content
    if isinstance(parts, str):
        _check_text(parts, limits)
        if not parts.strip():
            raise EmptyMessageError("the user's message is empty")
        return Content(parts)
    if len(parts) > limits.max_parts:
        raise MessageTooLargeError(
            f"the message has {len(parts)} parts; at most {limits.max_parts} are taken"
        )
    blocks = [_block(part, index, limits) for index, part in enumerate(parts)]
    _check_text("".join(b.text for b in blocks if isinstance(b, TextBlock)), limits)
    if not any(not isinstance(b, TextBlock) or b.text.strip() for b in blocks):
        raise EmptyMessageError("the user's message has no text, image or document in it")
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return Content(blocks[0].text)
    return Content(blocks)


def _block(part: Any, index: int, limits: RunLimits) -> ContentBlock:
    if isinstance(part, TextPart):
        return TextBlock(text=part.text)
    if not isinstance(part, ImagePart | DocumentPart):
        raise UnsupportedPartError(
            f"part {index} is {part.type!r}, which the agent does not take; send {_ACCEPTED}"
        )
    source = part.source
    if not isinstance(source, DataSource):
        raise UnsupportedPartError(
            f"part {index} is {part.type!r} given by {source.type!r}, which is not fetched;"
            f" send its bytes inline (source type 'data')"
        )
    data = _decoded(source.value, index, limits)
    declared = source.mime_type.strip().lower()
    if isinstance(part, DocumentPart):
        if not data.startswith(b"%PDF-"):
            raise UnsupportedPartError(
                f"part {index} is a document of type {_shown(declared)} whose bytes are not"
                " a PDF; the agent takes PDF documents"
            )
        return document_block(data)
    sniffed = image_type(data)
    if sniffed is None:
        raise UnsupportedPartError(
            f"part {index} is an image whose bytes are not PNG, JPEG, GIF or WebP"
        )
    if declared != sniffed:
        raise UnsupportedPartError(
            f"part {index} says it is {_shown(declared)} but its bytes are {sniffed}"
        )
    return ImageBlock(source=Base64Source(data=base64.b64encode(data).decode()), media_type=sniffed)


def _decoded(value: str, index: int, limits: RunLimits) -> bytes:
    # base64 is 4 characters for 3 bytes: refuse before decoding what would be too big.
    if len(value) // 4 * 3 > limits.max_file_bytes + 2:
        raise MessageTooLargeError(
            f"part {index} is larger than {limits.max_file_bytes} bytes; that many are taken"
        )
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise UnsupportedPartError(f"part {index}'s data is not base64") from None


def _check_text(text: str, limits: RunLimits) -> None:
    if len(text) > limits.max_text_chars:
        raise MessageTooLargeError(
            f"the message's text is longer than {limits.max_text_chars} characters"
        )


# --- decisions ---------------------------------------------------------------------------


def _answers(messages: Sequence[ToolMessage], limits: RunLimits) -> list[Decision]:
    """The answers of the trailing tool messages: one per call, an error when `error` is set."""
    seen: set[str] = set()
    answers = []
    for message in messages:
        call = message.tool_call_id
        if call in seen:
            raise InvalidDecisionsError(
                f"tool call {_shown(call)} is answered by more than one tool message;"
                " nothing was run"
            )
        seen.add(call)
        text = _tool_text(message)
        _check_text(text, limits)
        answers.append(Decision.answer(call, text, is_error=message.error is not None))
    return answers


def _tool_text(message: ToolMessage) -> str:
    content = message.content
    if not isinstance(content, str):
        texts = []
        for index, part in enumerate(content):
            if not isinstance(part, TextPart):
                raise UnsupportedPartError(
                    f"the result of tool call {_shown(message.tool_call_id)} has a"
                    f" {part.type!r} part ({index}); a tool result is text here"
                )
            texts.append(part.text)
        content = "".join(texts)
    if message.error is not None:
        return f"{message.error}\n{content}" if content else message.error
    return content


def _resumed(entries: Sequence[ResumeEntry]) -> list[Decision]:
    """The decisions of `resume` entries answering interrupts (a waiting call each).

    `resolved` with payload `{"approve": true}` (and `"input"` to edit it),
    `{"approve": false, "reason": ...}`, or a `neuron_turn.Decision`'s JSON;
    `cancelled` denies the call.
    """
    decisions = []
    for index, entry in enumerate(entries):
        if entry.status == "cancelled":
            decisions.append(Decision.deny(entry.interrupt_id, "cancelled by the user"))
            continue
        decisions.append(_payload_decision(entry.interrupt_id, entry.payload, f"resume[{index}]"))
    return decisions


def _payload_decision(call: str, payload: Any, where: str) -> Decision:
    if not isinstance(payload, dict):
        raise InvalidDecisionsError(
            f'{where}.payload must be {{"approve": true}} or {{"approve": false, "reason": ...}}'
        )
    if "decision" in payload:
        return _validated({"id": call, **payload}, where)
    unknown = sorted(set(payload) - {"approve", "reason", "input"})
    approve = payload.get("approve")
    if unknown or not isinstance(approve, bool):
        raise InvalidDecisionsError(
            f"{where}.payload needs a boolean 'approve' (and may have 'reason' or 'input')"
            + (f"; unknown keys: {', '.join(unknown)}" if unknown else "")
        )
    if approve:
        return _validated({"id": call, "decision": "approve", "input": payload.get("input")}, where)
    reason = payload.get("reason", "denied by the user")
    return _validated({"id": call, "decision": "deny", "reason": reason}, where)


def _forwarded(props: Any) -> list[Decision]:
    """The decisions under `forwardedProps.neuron_decisions` (`neuron_turn.Decision` JSON)."""
    if not isinstance(props, dict) or DECISIONS_PROP not in props:
        return []
    raw = props[DECISIONS_PROP]
    if not isinstance(raw, list):
        raise InvalidDecisionsError(f"forwardedProps.{DECISIONS_PROP} must be a list of decisions")
    return [_validated(item, f"forwardedProps.{DECISIONS_PROP}[{i}]") for i, item in enumerate(raw)]


def _validated(value: JsonValue, where: str) -> Decision:
    try:
        return Decision.model_validate(value)
    except ValidationError as exc:
        raise InvalidDecisionsError(f"{where}: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def _shown(text: str, limit: int = 80) -> str:
    """`text` quoted for an error message: cut short, its control characters escaped."""
    return json.dumps(text if len(text) <= limit else text[:limit] + "…")
