"""Sampling: an MCP server asking, mid tool call, for the client's model to write something.

A server's tool may need a model's words without holding a model of its own
(summarise this page, name this file, draft the reply). MCP lets it ask the
client (`sampling/createMessage`) with messages, a system prompt and a token
budget; the client runs its own model and answers. An `MCPClient` given
`sampling=handler` declares that it can and passes each such request to
`handler` as a `SamplingRequest`; without a handler the client declares
nothing, and a server that asks anyway is told sampling is not supported.

The server is untrusted, and a model costs money: a request is checked before
the handler sees it. Text and image content only (audio, tool use and tool
results are refused, as are `tools`: this client declares no `sampling.tools`),
at most `MAX_MESSAGES` messages and `MAX_TEXT_CHARS` characters of text, a
positive `maxTokens`, images whose bytes are the image type they claim. The
handler caps the tokens it lets the model write (`SamplingRequest.max_tokens`
is only what the server asks; `neuron_turn.ProviderSampler` caps it). A
handler refuses on purpose by raising `SamplingRefused`, whose message the
server reads; its other failures reach the server as their class name only,
the message logged here. The tool call waits for the answer within its
`timeout`, as for elicitation.

What the model used counts against the turn whose tool call the server
answers (`charge_for_sampling`, which `neuron_turn.ProviderSampler` calls):
an `MCPTool` of a client with a handler takes the call's `RunContext` and
keeps its `charge` for the requests made during the call.
"""

from __future__ import annotations

import base64
import binascii
import logging
import math
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import mcp_types as types
from mcp.client.session import ClientRequestContext, SamplingFnT
from mcp.shared.exceptions import MCPError
from moneyed import Money

from ..context import RunContext
from ..files import IMAGE_TYPES, image_type

__all__ = [
    "MAX_MESSAGES",
    "MAX_TEXT_CHARS",
    "SamplingAnswer",
    "SamplingContent",
    "SamplingHandler",
    "SamplingImage",
    "SamplingMessage",
    "SamplingRefused",
    "SamplingRequest",
    "charge_for_sampling",
]

_log = logging.getLogger(__name__)

MAX_MESSAGES: Final = 64
"""The most messages one sampling request may hold; a longer one is refused unread."""
MAX_TEXT_CHARS: Final = 100_000
"""The most characters of text one sampling request may hold (messages, system prompt,
stop sequences and model hints together), about 25,000 tokens; more is refused unread."""

_MARK: Final = {"neuron_tool": "sampling"}
"""Sent with this client's refusals: a server of MCP 2026-07-28 does not see them, the
client's own request fails with them, and the mark tells them from the server's errors."""
_NOT_SUPPORTED: Final = "Sampling not supported"
"""The SDK's refusal when no handler is given (a client declaring no sampling)."""
_REJECTED: Final = -1
"""The code MCP's specification gives a client's "user rejected sampling request"."""


@dataclass(frozen=True, slots=True)
class SamplingImage:
    """An image in a sampling message or answer: its bytes and their media type."""

    data: bytes
    media_type: str
    """One of `neuron_tool.files.IMAGE_TYPES`, as the bytes themselves say."""

    def __repr__(self) -> str:
        # The bytes never go into a repr: they may be megabytes.
        return f"SamplingImage(<{len(self.data)} bytes>, media_type={self.media_type!r})"


SamplingContent: TypeAlias = str | SamplingImage
"""One piece of a sampling message: text, or an image."""


@dataclass(frozen=True, slots=True)
class SamplingMessage:
    """One message of the conversation a server asks the model to continue."""

    role: Literal["user", "assistant"]
    content: tuple[SamplingContent, ...]
    """Text (`str`) and images, in the server's order; untrusted, as is all of it."""

    @property
    def text(self) -> str:
        """The message's text pieces, joined by blank lines (its images left out)."""
        return "\n\n".join(part for part in self.content if isinstance(part, str))


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """What an MCP server asks the client's model for: a conversation to continue, and limits."""

    server: str
    """The name of the `MCPClient` whose server asks."""
    messages: tuple[SamplingMessage, ...]
    """The conversation, never empty, at most `MAX_MESSAGES` long."""
    max_tokens: int
    """The most tokens the server asks for: a handler caps it at its own limit."""
    system_prompt: str | None = None
    """The system prompt the server wants; untrusted instructions, as its messages are."""
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()
    """Where the server wants the answer to end (the answer stops before any of them)."""
    model_hints: tuple[str, ...] = ()
    """Model names the server would like, best first (MCP's `modelPreferences.hints`);
    advisory: a handler may ignore them, as `neuron_turn.ProviderSampler` does."""


@dataclass(frozen=True, slots=True)
class SamplingAnswer:
    """What the handler answers: the model's words (or image), which model, and why it stopped."""

    content: SamplingContent
    model: str
    """The name of the model that wrote `content`."""
    stop_reason: Literal["endTurn", "maxTokens", "stopSequence"] | None = "endTurn"
    """MCP's words for why the model stopped (None: not known)."""


SamplingHandler: TypeAlias = Callable[[SamplingRequest], Awaitable[SamplingAnswer]]
"""`async def handler(request) -> SamplingAnswer`: runs the client's model for a server."""


class SamplingRefused(Exception):
    """Raised by a sampling handler to refuse a request, saying why to the server.

    Why its own class: any other exception from a handler reaches the server as
    its class name only (its message may hold what the server should not read);
    this one's message is written for the server ("the budget is spent"). A
    signal, not an error: it derives from `Exception`, outside the `ToolError`
    family, so no `except ToolError` takes it for a failure.
    """


def sampling_callback(server: str, handler: SamplingHandler) -> SamplingFnT:
    """The SDK callback that checks `server`'s requests, then puts them to `handler`."""

    async def answer(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        del context
        try:
            request = _request(server, params)
        except _Refused as exc:
            _log.warning("refused MCP server %r's sampling request: %s", server, exc)
            return types.ErrorData(code=types.INVALID_PARAMS, message=str(exc), data=_MARK)
        return await _answer(server, handler, request)

    return answer


class _Refused(Exception):
    """A server's request this client does not run, and why (sent to the server)."""


def _request(server: str, params: types.CreateMessageRequestParams) -> SamplingRequest:
    """`params` as a `SamplingRequest`, refusing what this client does not run or allow."""
    if params.tools or params.tool_choice is not None:
        raise _Refused("this client offers no tools to sampling (no sampling.tools capability)")
    if not params.messages:
        raise _Refused("the request holds no messages")
    if len(params.messages) > MAX_MESSAGES:
        raise _Refused(
            f"the request holds {len(params.messages)} messages; this client takes at most"
            f" {MAX_MESSAGES}"
        )
    if isinstance(params.max_tokens, bool) or params.max_tokens < 1:
        raise _Refused(f"maxTokens must be a positive number, got {params.max_tokens!r}")
    temperature = params.temperature
    if temperature is not None and not (math.isfinite(temperature) and temperature >= 0):
        raise _Refused(f"temperature must be a number from 0, got {temperature!r}")
    hints = params.model_preferences.hints if params.model_preferences else None
    request = SamplingRequest(
        server=server,
        messages=tuple(_message(message) for message in params.messages),
        max_tokens=params.max_tokens,
        system_prompt=params.system_prompt,
        temperature=temperature,
        stop_sequences=tuple(params.stop_sequences or ()),
        model_hints=tuple(hint.name for hint in hints or () if hint.name),
    )
    size = _text_size(request)
    if size > MAX_TEXT_CHARS:
        raise _Refused(
            f"the request holds {size} characters of text; this client takes at most"
            f" {MAX_TEXT_CHARS}"
        )
    return request


def _message(message: types.SamplingMessage) -> SamplingMessage:
    if message.role not in ("user", "assistant"):
        raise _Refused(f"a message's role must be 'user' or 'assistant', not {message.role!r}")
    content = tuple(_content(block) for block in message.content_as_list)
    return SamplingMessage(message.role, content)


def _content(block: types.SamplingMessageContentBlock) -> SamplingContent:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        return _image(block)
    raise _Refused(
        f"sampling content of type {block.type!r} is not supported by this client (text and"
        " image only)"
    )


def _image(block: types.ImageContent) -> SamplingImage:
    try:
        data = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        raise _Refused("an image's data is not base64") from None
    media_type = image_type(data)
    if media_type is None:
        kinds = ", ".join(sorted(IMAGE_TYPES))
        raise _Refused(f"an image is none of the types this client takes ({kinds})")
    return SamplingImage(data, media_type)


def _text_size(request: SamplingRequest) -> int:
    texts: list[Sequence[str]] = [
        [request.system_prompt or ""],
        request.stop_sequences,
        request.model_hints,
        *([part for part in m.content if isinstance(part, str)] for m in request.messages),
    ]
    return sum(len(text) for group in texts for text in group)


async def _answer(
    server: str, handler: SamplingHandler, request: SamplingRequest
) -> types.CreateMessageResult | types.ErrorData:
    try:
        answer = await handler(request)
    except SamplingRefused as exc:
        _log.info("the sampling handler refused MCP server %r: %s", server, exc)
        message = f"the client refused to sample: {exc}"
        return types.ErrorData(code=_REJECTED, message=message, data=_MARK)
    except Exception as exc:
        # The handler's message may hold what the server should not read.
        _log.exception("the sampling handler for MCP server %r failed", server)
        message = f"the client could not sample ({type(exc).__name__})"
        return types.ErrorData(code=types.INTERNAL_ERROR, message=message, data=_MARK)
    problem = _problem(answer)
    if problem is not None:
        _log.error("the sampling handler for MCP server %r answered wrongly: %s", server, problem)
        message = "the client's answer was not a sampling answer"
        return types.ErrorData(code=types.INTERNAL_ERROR, message=message, data=_MARK)
    return types.CreateMessageResult(
        role="assistant",
        content=_wire_content(answer.content),
        model=answer.model,
        stop_reason=answer.stop_reason,
    )


def _problem(answer: object) -> str | None:
    """What is wrong with a handler's `answer`; None if nothing."""
    if not isinstance(answer, SamplingAnswer):
        return f"returned {type(answer).__name__}, not a SamplingAnswer"
    # A handler's types are only a claim: its fields are checked as any object's.
    content: object = answer.content
    model: object = answer.model
    if not isinstance(content, str | SamplingImage):
        return f"answered with {type(content).__name__}, not text or a SamplingImage"
    if isinstance(content, SamplingImage) and content.media_type not in IMAGE_TYPES:
        return f"answered with an image of type {content.media_type!r}"
    if not isinstance(model, str):
        return f"named the model with {type(model).__name__}, not a str"
    if answer.stop_reason not in ("endTurn", "maxTokens", "stopSequence", None):
        return f"gave the stop reason {answer.stop_reason!r}"
    return None


def _wire_content(content: SamplingContent) -> types.TextContent | types.ImageContent:
    if isinstance(content, str):
        return types.TextContent(text=content)
    data = base64.b64encode(content.data).decode("ascii")
    return types.ImageContent(data=data, mime_type=content.media_type)


def refusal(exc: MCPError) -> str | None:
    """Why this client refused a server's sampling request, when `exc` is that refusal; else None.

    A server of MCP 2026-07-28 asks by answering "input required", and the
    client's refusal then fails the client's own request, not the server's. A
    server whose tool needs sampling may also refuse the call itself, naming
    the capability this client did not declare.
    """
    error = exc.error
    if error.data == _MARK:
        return error.message
    if error.code == types.INVALID_REQUEST and error.message == _NOT_SUPPORTED:
        return _NO_HANDLER
    if error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY:
        return _missing_sampling(error.data)
    return None


_NO_HANDLER: Final = "it has no sampling handler (MCPClient(sampling=...))"


def _missing_sampling(data: object) -> str | None:
    """Why a server refused a call for a sampling capability missing here; None if not that."""
    required = data.get("requiredCapabilities") if isinstance(data, dict) else None
    sampling = required.get("sampling") if isinstance(required, dict) else None
    if not isinstance(sampling, dict):
        return None
    if "tools" in sampling:
        return "the server wants to offer tools to sampling, which this client does not run"
    return _NO_HANDLER


_CHARGE: Final[ContextVar[RunContext[object] | None]] = ContextVar(
    "neuron_tool_mcp_sampling_charge", default=None
)
"""The context of the tool call in progress, whose turn a sampling request is charged to."""


@contextmanager
def charging_to(context: RunContext[object] | None) -> Iterator[None]:
    """Charge the sampling requests made during the block to `context`'s turn."""
    token = _CHARGE.set(context)
    try:
        yield
    finally:
        _CHARGE.reset(token)


def charge_for_sampling(
    cost: Money | None, *, input_tokens: int = 0, output_tokens: int = 0
) -> bool:
    """Count a sampling request's model call in the turn whose tool call the server answers.

    Why: a server's sampling spends from the same budget as the turn's own
    calls (`RunContext.charge`). Returns whether a turn counted it: False for a
    request outside a turn's tool call, and for one an older server sends on
    its back channel (answered in the session's own task, which knows no call).
    """
    context = _CHARGE.get()
    if context is None:
        return False
    context.charge(cost, input_tokens=input_tokens, output_tokens=output_tokens)
    return True
