"""The body `useChat` POSTs (the AI SDK's `DefaultChatTransport`): `{id, messages, trigger, ...}`.

Only the shape the server reads is checked here: each message's role and
parts as objects. The parts of the one message read (the last) are checked
where they are read.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from .errors import InvalidChatRequestError

DECISIONS_FIELD: Final = "neuron_decisions"
"""The body field holding decisions (`neuron_turn.Decision` JSON) for waiting calls."""


class UIMessage(BaseModel):
    """One message of the chat, as the AI SDK keeps it: a role and its parts."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str = ""
    role: Literal["system", "user", "assistant"]
    parts: list[dict[str, JsonValue]]


class ChatRequest(BaseModel):
    """The body of a chat request: the chat's id, its messages, and why it was sent."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    id: str
    """The chat's id (the session's, with the server's prefix)."""
    messages: list[UIMessage]
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"
    message_id: str | None = Field(default=None, alias="messageId")
    """The message to regenerate (for `regenerate-message`)."""

    @property
    def extra(self) -> dict[str, Any]:
        """The fields beside the AI SDK's own: the transport's `body`, a request's `body`."""
        return dict(self.model_extra or {})


def parse_chat(body: bytes) -> ChatRequest:
    """The chat request of a request body.

    Raises:
        InvalidChatRequestError: the body is not JSON, or not a chat request.
    """
    try:
        return ChatRequest.model_validate_json(body)
    except ValidationError as exc:
        raise InvalidChatRequestError(
            f"the body is not an AI SDK chat request: {first_error(exc)}"
        ) from None


def first_error(exc: ValidationError) -> str:
    """Where the first problem of `exc` is, and what it is (never the input itself)."""
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def shown(text: str, limit: int = 80) -> str:
    """`text` quoted for an error message: cut short, its control characters escaped."""
    return json.dumps(text if len(text) <= limit else text[:limit] + "…")
