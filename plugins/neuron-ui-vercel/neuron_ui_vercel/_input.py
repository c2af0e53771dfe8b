"""From a chat request to the `TurnInput` to dispatch.

The server's session store is the truth about a chat's history, so only the
END of `messages` is read: the last user message is the new input; or the
last assistant message's last step (the parts after its last `step-start`,
what the AI SDK's `lastAssistantMessageIsComplete...` helpers read too)
answers the calls the session waits on: its frontend tools' parts with an
output (`Decision.answer`), its parts with an approval response
(`Decision.approve` / `deny`). Everything the client sends is untrusted: ids,
parts and decisions are checked and refused with an error naming what is
wrong, never dropped.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Collection, Sequence
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from layer0 import Base64Source, Content, ContentBlock, ImageBlock, SessionId, TextBlock, TurnInput
from neuron_tool import ExternalTool
from neuron_tool.files import document_block, image_type
from neuron_turn import Decision, resume_input, with_external_tools

from ._request import DECISIONS_FIELD, ChatRequest, UIMessage, first_error, shown
from .errors import (
    EmptyMessageError,
    InvalidChatIdError,
    InvalidDecisionsError,
    MessageTooLargeError,
    UnsupportedPartError,
    UnsupportedTriggerError,
)
from .limits import ChatLimits

_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_ACCEPTED: Final = "text, or files as data URLs: PNG, JPEG, GIF or WebP images, PDF documents"
_IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")


class _Approval(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    approved: bool | None = None
    reason: str | None = None


class _ToolPart(BaseModel):
    """A tool part of an assistant message (`tool-<name>`, or `dynamic-tool` with its name)."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    type: str
    tool_call_id: str = Field(alias="toolCallId")
    tool_name: str | None = Field(default=None, alias="toolName")
    state: str
    output: JsonValue = None
    error_text: str | None = Field(default=None, alias="errorText")
    approval: _Approval | None = None

    @property
    def name(self) -> str:
        if self.type == "dynamic-tool":
            return self.tool_name or ""
        return self.type[len("tool-") :]  # a static tool part is named by its type alone


def session_of(request: ChatRequest, prefix: str) -> SessionId:
    """The neuron session of the request's chat: `prefix` + the chat id.

    Raises:
        InvalidChatIdError: the id is empty, longer than 128 characters, or
            holds characters other than letters, digits and `._:-`.
    """
    if _ID.fullmatch(request.id) is None:
        raise InvalidChatIdError(
            "a chat id must be 1 to 128 letters, digits or '._:-' (the AI SDK's ids and"
            f" UUIDs are); got {shown(request.id)}"
        )
    return prefix + request.id


def turn_input(
    request: ChatRequest, prefix: str, limits: ChatLimits, frontend: Sequence[ExternalTool]
) -> tuple[TurnInput, list[Decision]]:
    """The turn input the request asks for, and the decisions it carries (none: a new message).

    A new user message when `messages` ends with one; otherwise a resume of the
    calls the last assistant message's last step answers or decides, or that
    the body's `neuron_decisions` decide. The `frontend` tools are offered to
    the model as external tools (the client runs them).

    Raises:
        VercelAiError: the request cannot be taken (a subclass says why).
    """
    session = session_of(request, prefix)
    if request.trigger == "regenerate-message":
        raise UnsupportedTriggerError(
            "regenerating an answer is not supported: the server's session keeps the answer"
            " it gave; send a new message instead"
        )
    last = request.messages[-1] if request.messages else None
    decisions = forwarded(request.extra)
    if last is not None and last.role == "user":
        if decisions:
            raise InvalidDecisionsError(
                "a request that decides waiting calls carries no new user message; send the"
                " message in the next request"
            )
        input = TurnInput(message=user_content(last, limits), trigger="user", session=session)
    else:
        if last is not None and last.role == "assistant":
            names = {tool.name for tool in frontend}
            decisions = [*step_decisions(last, names, limits), *decisions]
        if not decisions:
            got = "no messages" if last is None else f"a {last.role!r} message"
            raise EmptyMessageError(
                "the last message must be the user's, or the assistant's with tool outputs or"
                f" approval responses for the calls waiting; got {got}"
            )
        _check_distinct(decisions)
        input = resume_input(session, decisions)
    return (with_external_tools(input, frontend) if frontend else input), decisions


# --- the new user message ----------------------------------------------------------------


def user_content(message: UIMessage, limits: ChatLimits) -> Content:
    """The content of the user's message for a turn: its text, images and PDF documents.

    Raises:
        EmptyMessageError: nothing in it.
        UnsupportedPartError: a part the agent cannot take.
        MessageTooLargeError: past one of `limits`.
    """
    parts = message.parts
    if len(parts) > limits.max_parts:
        raise MessageTooLargeError(
            f"the message has {len(parts)} parts; at most {limits.max_parts} are taken"
        )
    blocks = [_block(part, index, limits) for index, part in enumerate(parts)]
    text = "".join(b.text for b in blocks if isinstance(b, TextBlock))
    if len(text) > limits.max_text_chars:
        raise MessageTooLargeError(
            f"the message's text is longer than {limits.max_text_chars} characters"
        )
    if not any(not isinstance(b, TextBlock) or b.text.strip() for b in blocks):
        raise EmptyMessageError("the user's message has no text, image or document in it")
    if all(isinstance(b, TextBlock) for b in blocks):
        return Content(text)
    return Content(blocks)


def _block(part: dict[str, JsonValue], index: int, limits: ChatLimits) -> ContentBlock:
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return TextBlock(text=str(part["text"]))
    if kind != "file":
        named = shown(kind) if isinstance(kind, str) else "of no type"
        raise UnsupportedPartError(
            f"part {index} is {named}, which the agent does not take; send {_ACCEPTED}"
        )
    url, declared = part.get("url"), part.get("mediaType")
    if not isinstance(url, str) or not isinstance(declared, str):
        raise UnsupportedPartError(f"part {index} is a file without a 'url' and a 'mediaType'")
    declared = declared.strip().lower()
    data = _data_url(url, index, limits)
    if declared == "application/pdf":
        if not data.startswith(b"%PDF-"):
            raise UnsupportedPartError(
                f"part {index} says it is application/pdf but its bytes are not a PDF"
            )
        return document_block(data)
    if declared not in _IMAGE_TYPES:
        raise UnsupportedPartError(
            f"part {index} is a file of type {shown(declared)}, which the agent does not take;"
            f" send {_ACCEPTED}"
        )
    sniffed = image_type(data)
    if sniffed is None:
        raise UnsupportedPartError(
            f"part {index} is an image whose bytes are not PNG, JPEG, GIF or WebP"
        )
    if sniffed != declared:
        raise UnsupportedPartError(
            f"part {index} says it is {shown(declared)} but its bytes are {sniffed}"
        )
    return ImageBlock(source=Base64Source(data=base64.b64encode(data).decode()), media_type=sniffed)


def _data_url(url: str, index: int, limits: ChatLimits) -> bytes:
    """The bytes of a `data:<type>;base64,<data>` URL, bounded before they are decoded."""
    head, comma, data = url.partition(",")
    if not head.startswith("data:"):
        raise UnsupportedPartError(
            f"part {index} is a file given by URL, which is not fetched; send it as a data URL"
            " (the AI SDK's file inputs are)"
        )
    if not comma or not head.endswith(";base64"):
        raise UnsupportedPartError(f"part {index}'s data URL is not base64 ('data:…;base64,…')")
    # base64 is 4 characters for 3 bytes: refuse before decoding what would be too big.
    if len(data) // 4 * 3 > limits.max_file_bytes + 2:
        raise MessageTooLargeError(
            f"part {index} is larger than {limits.max_file_bytes} bytes; that many are taken"
        )
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise UnsupportedPartError(f"part {index}'s data is not base64") from None


# --- decisions ---------------------------------------------------------------------------


def step_decisions(
    message: UIMessage, frontend: Collection[str], limits: ChatLimits
) -> list[Decision]:
    """The decisions of the last step of the assistant's `message`.

    A frontend tool's part with `output-available` or `output-error` answers
    its call; a part in `approval-responded` approves or denies its call.
    Parts the server settled itself (its own tools' outputs) are not read.
    """
    parts = message.parts
    starts = [i for i, part in enumerate(parts) if part.get("type") == "step-start"]
    first = starts[-1] + 1 if starts else 0
    decisions = []
    for index in range(first, len(parts)):
        kind = parts[index].get("type")
        if not isinstance(kind, str) or not (kind.startswith("tool-") or kind == "dynamic-tool"):
            continue
        try:
            part = _ToolPart.model_validate(parts[index])
        except ValidationError as exc:
            raise InvalidDecisionsError(
                f"part {index} of the last message is no tool part: {first_error(exc)}"
            ) from None
        decision = _decision(part, frontend, limits)
        if decision is not None:
            decisions.append(decision)
    return decisions


def _decision(part: _ToolPart, frontend: Collection[str], limits: ChatLimits) -> Decision | None:
    call = part.tool_call_id
    if part.state == "approval-responded" and part.approval is not None:
        if part.approval.approved is None:
            raise InvalidDecisionsError(
                f"the approval of tool call {shown(call)} has no 'approved'"
            )
        if part.approval.approved:
            return Decision.approve(call)
        return Decision.deny(call, part.approval.reason or "denied by the user")
    if part.name not in frontend:
        return None
    if part.state == "output-available":
        _check_output(call, part.output, limits)
        return Decision.answer(call, part.output)
    if part.state == "output-error":
        text = part.error_text or "the tool failed"
        _check_output(call, text, limits)
        return Decision.answer(call, text, is_error=True)
    return None


def _check_output(call: str, output: JsonValue, limits: ChatLimits) -> None:
    size = len(output) if isinstance(output, str) else len(json.dumps(output, ensure_ascii=False))
    if size > limits.max_text_chars:
        raise MessageTooLargeError(
            f"the output of tool call {shown(call)} is longer than {limits.max_text_chars}"
            " characters"
        )


def forwarded(extra: dict[str, Any]) -> list[Decision]:
    """The decisions under the body's `neuron_decisions` (`neuron_turn.Decision` JSON)."""
    if DECISIONS_FIELD not in extra:
        return []
    raw = extra[DECISIONS_FIELD]
    if not isinstance(raw, list):
        raise InvalidDecisionsError(f"{DECISIONS_FIELD} must be a list of decisions")
    decisions = []
    for index, item in enumerate(raw):
        try:
            decisions.append(Decision.model_validate(item))
        except ValidationError as exc:
            raise InvalidDecisionsError(f"{DECISIONS_FIELD}[{index}]: {first_error(exc)}") from None
    return decisions


def _check_distinct(decisions: Sequence[Decision]) -> None:
    seen: set[str] = set()
    for decision in decisions:
        if decision.id in seen:
            raise InvalidDecisionsError(
                f"tool call {shown(decision.id)} is decided more than once; nothing was run"
            )
        seen.add(decision.id)
