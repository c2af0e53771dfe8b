"""The model-provider contract: internal message types, request, response, `Provider`.

These are the loop's own types, not wire types: each provider plugin maps
them to its API's JSON. They are slotted dataclasses because the loop builds
them on every iteration and validation has already happened at the edges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, TypeAlias, runtime_checkable

from moneyed import Money
from pydantic import JsonValue

from layer0 import ImageSource
from neuron_tool import ToolSchema

from .hosted_tools import HostedTool, HostedToolCall
from .output import OutputSchema
from .sampling import Sampling
from .thinking import Thinking
from .tool_choice import ToolChoice

__all__ = [
    "MAX_IMAGE_BASE64",
    "ContentPart",
    "DocumentPart",
    "ImagePart",
    "Provider",
    "ProviderMessage",
    "ProviderRequest",
    "ProviderResponse",
    "RawPart",
    "Role",
    "StopReason",
    "TextPart",
    "ThinkingPart",
    "TokenUsage",
    "ToolResultPart",
    "ToolUsePart",
]

Role: TypeAlias = Literal["system", "user", "assistant"]
"""Who a message is from."""

StopReason: TypeAlias = Literal["end_turn", "tool_use", "max_tokens", "content_filter"]
"""Why the model stopped generating."""


@dataclass(frozen=True, slots=True)
class TextPart:
    """Plain text."""

    text: str


MAX_IMAGE_BASE64: Final = 64 * 1024 * 1024
"""The longest inline image a provider's answer may carry, in base64 characters (48 MiB).

Why one number: a provider leaves a larger image out of its answer (a note in its
place), and whatever carries answers on (the sandbox's channel between child and
parent) sizes itself from this, so an image kept outside is kept there too.
"""


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image, inline (base64) or by URL."""

    source: ImageSource
    media_type: str


@dataclass(frozen=True, slots=True)
class DocumentPart:
    """A document (a PDF, say), inline (base64) or by URL; `name` is its file name, if known.

    It travels in layer0 content as a custom block (`neuron_turn.document_block`).
    """

    source: ImageSource
    media_type: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ToolUsePart:
    """The model asking for a tool call; `id` pairs it with its result."""

    id: str
    name: str
    input: JsonValue


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """The result of a tool call; `is_error` tells the model the call failed.

    `files` are the images and documents the tool returned with it
    (`neuron_tool.ToolReturn`), shown to the model with the result.
    """

    tool_use_id: str
    content: str
    is_error: bool = False
    files: tuple[ImagePart | DocumentPart, ...] = ()


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """The model's visible reasoning; sent back unchanged (with its signature) on later calls.

    Anthropic rejects a tool result whose preceding thinking block was altered
    or dropped, so providers keep `signature` byte for byte.
    """

    thinking: str
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class RawPart:
    """A provider-specific block kept only to be sent back as-is (e.g. redacted thinking).

    `provider` names the plugin that understands `data`; other providers drop it.
    """

    provider: str
    data: JsonValue


ContentPart: TypeAlias = (
    TextPart | ImagePart | DocumentPart | ToolUsePart | ToolResultPart | ThinkingPart | RawPart
)
"""One piece of a message."""


@dataclass(frozen=True, slots=True)
class ProviderMessage:
    """One message of the conversation as sent to a provider."""

    role: Role
    content: Sequence[ContentPart]
    pinned: bool = False
    """Context strategies never drop, clear or summarise this message (nor the tool
    exchange it belongs to). Not sent to the model; kept in the stored history."""


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """Everything a provider needs for one model call."""

    model: str
    messages: Sequence[ProviderMessage]
    tools: Sequence[ToolSchema] = ()
    max_tokens: int | None = None
    temperature: float | None = None
    system: str | None = None
    """The base system prompt and the per-call addendum, joined by a newline."""
    extra: dict[str, JsonValue] = field(default_factory=dict)
    """Provider-specific options passed through to the request body, and the input's
    `metadata` under the key `"metadata"` (trace ids)."""
    tool_choice: ToolChoice | None = None
    """Whether the model may, must or must not call a tool (None: not sent, auto)."""
    parallel_tool_calls: bool | None = None
    """Whether the model may ask for several tool calls at once (None: not sent)."""
    output: OutputSchema | None = None
    """The JSON Schema the answer must match, for providers with native structured
    output (set only in `native` output mode)."""
    prompted_output: OutputSchema | None = None
    """The JSON Schema the system prompt asks the answer to match (set only in
    `prompted` output mode, where `system` holds the instruction): a provider sends
    nothing for it; a test model (`testing.SchemaProvider`) answers by it."""
    hosted_tools: Sequence[HostedTool] = ()
    """The tools the provider runs itself (web search, code execution) that this call
    offers; a provider sends those its `hosted_tools` lists and refuses any other."""
    thinking: Thinking | None = None
    """How much the model thinks before it answers (None: the model's default); sent
    by providers whose `takes_thinking` is true (see `neuron_turn.loop.thinking`)."""
    sampling: Sampling | None = None
    """Sampling settings beyond `temperature` (None: the API's defaults); each set one
    is among the provider's `takes_sampling` (see `neuron_turn.loop.sampling`)."""


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens one model call used; cache fields are None when the API does not say.

    `input_tokens` is every input token the model processed, cache reads and
    cache writes included (OpenAI counts them so; providers whose API counts
    them apart, like Anthropic, add them), so totals compare across providers.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ProviderResponse:
    """One model call's answer."""

    content: Sequence[ContentPart]
    stop_reason: StopReason
    usage: TokenUsage = field(default_factory=TokenUsage)
    model: str = ""
    """The model the API says answered (may differ from the one asked for)."""
    cost: Money | None = None
    """The call's cost in USD; None when the price of `model` is unknown."""
    truncated: bool | None = None
    hosted_calls: Sequence[HostedToolCall] = ()
    """The hosted tools' calls the provider ran for this answer, in order (for the record)."""
    unpriced_web_searches: int = 0
    """The hosted web searches this call ran that no price covers, so `cost` leaves them
    out; the loop declares a warning rather than let a budget count them as free."""
    unpriced_images: int = 0
    """The images a hosted image tool made in this call that no price covers (as
    `unpriced_web_searches`: left out of `cost`, and warned of by the loop)."""
    unpriced_code_executions: int = 0
    """The hosted code execution calls this call ran whose fees (container time, a
    container session) `cost` leaves out, the response not saying them; as
    `unpriced_web_searches`, the loop warns of them rather than count them as free."""


@runtime_checkable
class Provider(Protocol):
    """A model API: one request in, one response out.

    Raises `ProviderError` subclasses; their class says whether a retry may help.
    A provider whose API runs hosted tools lists their names in a `hosted_tools`
    frozenset attribute (`"web_search"`, ...; see `neuron_turn.WebSearch`): a
    turn granting one its provider does not list is refused when it is made.
    One that maps `ProviderRequest.thinking` to its API sets `takes_thinking = True`;
    a turn with a thinking setting over any other is refused when it is made. One
    that maps `ProviderRequest.sampling` names the settings it takes in a
    `takes_sampling` frozenset (`"top_p"`, `"seed"`...); a turn setting any other
    is refused when it is made. One that constrains a strict tool's input to its
    schema (`ToolSchema.strict`) sets `takes_strict_tools = True`; a strict tool
    offered over any other is refused (`neuron_turn.loop.strict_tools`). One whose
    strict mode may be asked for unasked also sets `infers_strict_tools = True`: a
    typed turn's final-answer tool is then strict unless its `OutputSpec` says not,
    where its schema fits strict mode as it is. One that
    pauses a remote MCP server's call for approval (`HostedMCP.require_approval`,
    handed to the loop as a call named `mcp`: `neuron_turn.loop.hosted_approvals`)
    sets `approves_hosted_calls = True`; a turn asking for it over any other is
    refused when it is made.
    """

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one model call."""
        ...
