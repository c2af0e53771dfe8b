"""Pure mapping between `neuron_turn` provider types and Responses API JSON (no I/O).

Request side: `request_body` (`POST /responses`). Response side:
`parse_response`, shared by the non-streamed body and the stream's final
`response.completed` / `response.incomplete` event. Field names follow
openai-python's `types/responses` (`ResponseCreateParams`, `Response`,
`ResponseInputItemParam`).

Reasoning items: a reasoning model's `reasoning` output item becomes a
`ThinkingPart` (its summary, for people to read) followed by a `RawPart`
owned by this provider holding the item itself (`id`, `summary`,
`encrypted_content`), which is sent back as-is on the next call, so a
multi-step tool loop keeps the model's reasoning. The encrypted content does
not go in `ThinkingPart.signature`: the Anthropic provider sends any signed
thinking back as its own, and would fail on OpenAI's ciphertext; a
`RawPart` is dropped by every other provider.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from pydantic import JsonValue

from layer0 import Base64Source
from neuron_tool.schema import ToolSchema
from neuron_turn.loop.hosted_approvals import (
    HOSTED_CALL,
    HOSTED_ID_PREFIX,
    hosted_call_id,
    hosted_call_input,
    hosted_request,
)
from neuron_turn.loop.hosted_tools import (
    CodeExecution,
    HostedMCP,
    HostedTool,
    HostedToolCall,
    ImageGeneration,
    WebSearch,
)
from neuron_turn.loop.output import OutputSchema
from neuron_turn.loop.provider import (
    MAX_IMAGE_BASE64,
    ContentPart,
    DocumentPart,
    ImagePart,
    ProviderMessage,
    ProviderRequest,
    RawPart,
    StopReason,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.tool_choice import ToolChoice
from neuron_turn.loop.tool_files import made_file_note, unseen_file_note

from ._wire import (
    ERROR_PREFIX,
    Completion,
    Json,
    UnsupportedContentError,
    add_sampling,
    arguments_text,
    data_url,
    document_name,
    image_url,
    merge_extra,
    optional_token_count,
    parse_arguments,
    part_kind,
    reasoning_effort,
    token_count,
    tool_strict_form,
)
from .presets import PresetSampling

logger = logging.getLogger("neuron_provider_openai")

PROVIDER: Final = "openai-responses"
"""The provider name; also the `RawPart.provider` of the reasoning items it sends back."""
ENCRYPTED_REASONING: Final = "reasoning.encrypted_content"
"""The `include` value that makes a stateless call return its reasoning, encrypted."""

SAMPLING: Final = PresetSampling(
    source="https://platform.openai.com/docs/api-reference/responses/create",
    takes=frozenset({"top_p"}),
)
"""The Responses API takes `top_p` only: no `top_k`, `stop`, `seed` nor penalties."""

_INCOMPLETE_REASONS: Final[Mapping[str, StopReason]] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}
_UNFINISHED: Final = frozenset({"queued", "in_progress"})
UNFINISHED: Final = _UNFINISHED
"""The statuses of a response still being made (a background response, while it is polled)."""
RESPONSE_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,200}")
"""What a response's `id` must be to be put in a URL (`resp_...`): nothing of it a path could
take for another place (`/`, `..`, `?`)."""


class MalformedResponseError(ValueError):
    """A 200 body that is JSON but not a Responses API response."""


class CancelledResponseError(Exception):
    """The response says it was cancelled (`status: cancelled`) before it finished."""

    def __init__(self, response_id: object) -> None:
        super().__init__("the response was cancelled")
        self.response_id = response_id


class FailedResponseError(Exception):
    """The response says it failed (`status: failed`); `error` is its error object."""

    def __init__(self, error: object) -> None:
        super().__init__("the response failed")
        self.error = error


# --- request ----------------------------------------------------------------


def request_body(
    request: ProviderRequest,
    *,
    model: str,
    defaults: Mapping[str, JsonValue] | None = None,
    send_metadata: bool = False,
    encrypted_reasoning: bool = False,
) -> Json:
    """Build the JSON body for `POST /responses`.

    Precedence, lowest first: `store: false`, `defaults`, the fields built from
    the request, then `request.extra`. `store` is off because the loop holds
    the conversation and sends all of it each call: nothing needs to be kept
    on OpenAI's side (nor may be, for zero-data-retention accounts). With
    `encrypted_reasoning` (and `store` still off), `include` asks for the
    reasoning items' encrypted content, the only way a stateless call can
    hand a reasoning model its earlier reasoning back. `request.sampling` sets
    `top_p` (`SAMPLING`), unless `defaults` or `request.extra` does. A strict tool
    goes in its strict form (`tool_to_wire`).

    Raises:
        UnsupportedContentError: a sampling setting the API does not take, or a strict
            tool whose schema has no strict form.
    """
    body: Json = {"store": False, **(defaults or {})}
    body["model"] = model
    if request.system:
        body["instructions"] = request.system
    body["input"] = build_input(request.messages, stored=body["store"] is True)
    tools = [tool_to_wire(tool) for tool in request.tools]
    tools.extend(hosted_tool_to_wire(tool) for tool in request.hosted_tools)
    if tools:
        body["tools"] = list[JsonValue](tools)
    cap = max_tool_calls(request.hosted_tools)
    if cap is not None:
        body["max_tool_calls"] = cap
    if request.tools:
        if request.tool_choice is not None:
            body["tool_choice"] = tool_choice_to_wire(request.tool_choice)
        if request.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.output is not None:
        body["text"] = {"format": text_format(request.output)}
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.thinking is not None and "reasoning" not in body:
        # A summary, so the model's reasoning reaches the turn as ThinkingParts.
        body["reasoning"] = {"effort": reasoning_effort(request.thinking), "summary": "auto"}
    add_sampling(body, request, SAMPLING)
    if encrypted_reasoning and body["store"] is False:
        body["include"] = _with_encrypted_reasoning(body.get("include"))
    merge_extra(body, request.extra, send_metadata=send_metadata)
    return body


HOSTED_TOOLS: Final = frozenset({"web_search", "code_execution", "mcp", "image_generation"})
"""The hosted tools the Responses API runs (`neuron_turn.WebSearch`, `CodeExecution`,
`HostedMCP`, `ImageGeneration`)."""

IMAGE_SIZES: Final[Mapping[str, str]] = {
    "1:1": "1024x1024",
    "3:2": "1536x1024",
    "2:3": "1024x1536",
}
"""`ImageGeneration.aspect_ratio` as the image tool's `size`: the ratios its fixed sizes have
exactly (openai-python's `tool_param.ImageGeneration.size`, pydantic-ai's mapping)."""

IMAGE_TAKES: Final[Mapping[str, frozenset[str] | None]] = {
    "aspect_ratio": frozenset(IMAGE_SIZES),
    "quality": None,
    "output_format": None,
    "background": None,
    "output_compression": None,
    "moderation": None,
    "model": None,
}
"""The `ImageGeneration` settings the image tool takes (no `image_size`: 1K/2K/4K name no
size of its own), each value the tool checks, but the aspect ratio: those of `IMAGE_SIZES`."""


def hosted_tool_to_wire(tool: HostedTool) -> Json:
    """The built-in tool entry of the body's `tools` for hosted `tool`.

    Raises:
        UnsupportedContentError: a hosted tool, or a limit of one, this API does not take.
    """
    if isinstance(tool, CodeExecution):
        return {"type": "code_interpreter", "container": {"type": "auto"}}
    if isinstance(tool, HostedMCP):
        return mcp_to_wire(tool)
    if isinstance(tool, ImageGeneration):
        return image_generation_to_wire(tool)
    if not isinstance(tool, WebSearch):
        raise UnsupportedContentError(
            f"the Responses API does not run the hosted tool {tool.name!r}"
        )
    if tool.blocked_domains:
        raise UnsupportedContentError(
            "the Responses API's web search takes allowed_domains, not blocked_domains"
        )
    entry: Json = {"type": "web_search"}
    if tool.allowed_domains:
        entry["filters"] = {"allowed_domains": list[JsonValue](tool.allowed_domains)}
    if tool.user_location is not None:
        entry["user_location"] = {"type": "approximate", **tool.user_location.as_dict()}
    return entry


def image_generation_to_wire(tool: ImageGeneration) -> Json:
    """`ImageGeneration` as the API's `image_generation` tool entry.

    The form of openai-python's `types/responses/tool_param.ImageGeneration`: `size` from
    the aspect ratio (`IMAGE_SIZES`), the other settings under their own names, only those
    given (the rest are the API's defaults). `partial_images` is never asked for: a
    stream's drafts are not kept, the image comes whole when its call completes.

    Raises:
        UnsupportedContentError: a setting the tool has no form for (`image_size`, an
            aspect ratio other than 1:1, 3:2 and 2:3); the turn is refused before this
            when it is made (`IMAGE_TAKES`).
    """
    entry: Json = {"type": "image_generation"}
    for option, value in tool.settings().items():
        allowed = IMAGE_TAKES.get(option, frozenset())
        if allowed is not None and value not in allowed:
            takes = ", ".join(sorted(allowed)) or "none"
            raise UnsupportedContentError(
                f"the Responses API's image tool takes ImageGeneration.{option} {takes}; "
                f"got {value!r}"
            )
        if option == "aspect_ratio":
            entry["size"] = IMAGE_SIZES[str(value)]
        else:
            entry[option] = value
    return entry


def mcp_to_wire(tool: HostedMCP) -> Json:
    """A remote MCP server as the API's `mcp` tool entry.

    The form of OpenAI's remote MCP guide
    (https://platform.openai.com/docs/guides/tools-remote-mcp): `server_label`,
    `server_url`, `allowed_tools` (only when the caller limited them; left out, the
    model may call every tool the server lists) and `authorization` (the bearer
    token OpenAI sends the server, only when set: a secret, which the provider
    adds to the call's secrets so no log line nor error carries it).

    `require_approval` is `"never"` unless the caller asked (`HostedMCP.require_approval`):
    `"always"` for every tool, or `{"always": {"tool_names": [...]}}` for the named ones
    (with `"never"` for the rest of `allowed_tools`, when those are given). Each call
    OpenAI then asks about ends the answer with an `mcp_approval_request`, which
    the turn pauses on (`neuron_turn.loop.hosted_approvals`).
    """
    entry: Json = {
        "type": "mcp",
        "server_label": tool.label,
        "server_url": tool.url,
        "require_approval": _approval_to_wire(tool),
    }
    if tool.allowed_tools is not None:
        entry["allowed_tools"] = list[JsonValue](tool.allowed_tools)
    if tool.authorization is not None:
        entry["authorization"] = tool.authorization
    return entry


def _approval_to_wire(tool: HostedMCP) -> JsonValue:
    named = tool.approval_names
    if named is None:
        return "always"
    if not named:
        return "never"
    asked: Json = {"always": {"tool_names": list[JsonValue](named)}}
    free = [name for name in tool.allowed_tools or () if name not in named]
    if free:
        asked["never"] = {"tool_names": list[JsonValue](free)}
    return asked


def max_tool_calls(tools: Sequence[HostedTool]) -> int | None:
    """The body's `max_tool_calls`: a web search's `max_uses`, the API's cap on built-in calls.

    Raises:
        UnsupportedContentError: `max_uses` next to another hosted tool, which the one cap
            (on all built-in calls of a response together) would limit too.
    """
    caps = [tool.max_uses for tool in tools if isinstance(tool, WebSearch) and tool.max_uses]
    if not caps:
        return None
    if len(tools) > 1:
        raise UnsupportedContentError(
            "the Responses API caps all built-in tool calls of a response together "
            "(max_tool_calls): WebSearch.max_uses works here only when web search is the "
            "turn's one hosted tool"
        )
    return caps[0]


def _with_encrypted_reasoning(include: JsonValue) -> list[JsonValue]:
    values = list(include) if isinstance(include, list) else []
    return values if ENCRYPTED_REASONING in values else [*values, ENCRYPTED_REASONING]


def tool_to_wire(tool: ToolSchema) -> Json:
    """A function tool, flat (`name` beside `type`, not under `function`).

    A strict tool (`strict=True`) sends its strict form (`tool_strict_form`) with
    `strict: true`. Any other sends its own schema with `strict: false`:
    the Responses API defaults it to true, which rejects every schema with an
    optional property; the tool registry checks the arguments against the schema
    itself.

    Raises:
        UnsupportedContentError: a strict tool whose schema has no strict form.
    """
    if tool.strict is not True:
        return {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
            "strict": False,
        }
    strict = tool_strict_form(tool)
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": strict.schema,
        "strict": True,
    }


def tool_choice_to_wire(choice: ToolChoice) -> JsonValue:
    """`"auto"`, `"none"`, `"required"`, or `{"type": "function", "name": ...}`."""
    if choice.name is None:
        return choice.mode
    return {"type": "function", "name": choice.name}


def text_format(output: OutputSchema) -> Json:
    """`{"type": "json_schema", "name", "description"?, "schema", "strict"}` for `text.format`.

    `strict` is always sent: true only when the schema allows it (every property
    required, no others), as the Chat provider decides.
    """
    spec: Json = {"type": "json_schema", "name": output.name}
    if output.description:
        spec["description"] = output.description
    spec["schema"] = output.schema
    spec["strict"] = output.strict
    return spec


def build_input(messages: Sequence[ProviderMessage], *, stored: bool = False) -> list[JsonValue]:
    """The `input` items: each message as one or more items, in order.

    `stored`: the call has `store: true`, so a reasoning item the API kept
    may be sent back by its id alone.
    """
    items: list[JsonValue] = []
    asked: dict[str, str] = {}  # a request's call id: the API's id of the request
    for message in messages:
        if message.role == "assistant":
            items.extend(assistant_items(message.content, stored=stored))
            for part in message.content:
                if isinstance(part, ToolUsePart) and (request := hosted_request(part)):
                    asked[part.id] = request.request_id
        elif message.role == "system":
            items.append({"role": "developer", "content": _system_text(message.content)})
        else:
            items.extend(user_items(message.content, asked))
    return items


def _system_text(parts: Sequence[ContentPart]) -> str:
    texts: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif not isinstance(part, ThinkingPart | RawPart):
            raise UnsupportedContentError(
                f"a system message can hold only text, not {part_kind(part)}"
            )
    return "\n".join(texts)


def user_items(parts: Sequence[ContentPart], asked: Mapping[str, str] | None = None) -> list[Json]:
    """Tool results first, as `function_call_output` items, then the user's own message.

    The loop sends a round's tool results as one user message, possibly with
    text after them; the API wants each output as an item of its own after
    the call it answers, so they lead. The result of a remote MCP call the API
    asked about (its call id in `asked`, with the API's id of the request) is its
    `mcp_approval_response`.
    """
    outputs: list[Json] = []
    content: list[JsonValue] = []
    asked = asked or {}
    for part in parts:
        if isinstance(part, ToolResultPart) and part.tool_use_id in asked:
            outputs.append(approval_response_to_wire(part, asked[part.tool_use_id]))
        elif isinstance(part, ToolResultPart):
            outputs.append(tool_output_to_wire(part))
        elif isinstance(part, TextPart):
            content.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append(image_to_wire(part))
        elif isinstance(part, DocumentPart):
            content.append(document_to_wire(part))
        elif isinstance(part, ToolUsePart):
            raise UnsupportedContentError("a user message cannot hold a tool call")
        # ThinkingPart / RawPart come from a model's answer and mean nothing here.
    if not content and outputs:
        return outputs
    return [*outputs, {"role": "user", "content": content}]


def tool_output_to_wire(part: ToolResultPart) -> Json:
    """A tool result as `function_call_output`; a failed one is prefixed with `Error: `.

    The item has no error flag, hence the prefix (as in Chat Completions). A
    result with files sends its text and the files together as the output's
    content list (`input_text`, `input_image`, `input_file`).
    """
    text = f"{ERROR_PREFIX}{part.content}" if part.is_error else part.content
    output: JsonValue = text
    if part.files:
        output = [{"type": "input_text", "text": text}, *map(_file_to_wire, part.files)]
    return {"type": "function_call_output", "call_id": part.tool_use_id, "output": output}


def approval_response_to_wire(part: ToolResultPart, request_id: str) -> Json:
    """The decision on the API's request `request_id`: "yes", or "no" with the reason.

    Only a result that is no error approves it (`hosted_approvals.APPROVED`); a
    denial, a refusal or a call cut off is a "no", so nothing runs unapproved.
    """
    decided: Json = {
        "type": "mcp_approval_response",
        "approval_request_id": request_id,
        "approve": not part.is_error,
    }
    if part.is_error:
        decided["reason"] = part.content
    return decided


def approval_request_to_wire(part: ToolUsePart) -> Json | None:
    """A remote MCP call the API asked about, as the `mcp_approval_request` it was (None: not one).

    Sent back with its id, which the decision after it names.
    """
    asked = hosted_request(part)
    if asked is None:
        return None
    arguments = asked.arguments
    return {
        "type": "mcp_approval_request",
        "id": asked.request_id,
        "server_label": asked.server,
        "name": asked.tool,
        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
    }


def _file_to_wire(file: ImagePart | DocumentPart) -> Json:
    if isinstance(file, ImagePart):
        return image_to_wire(file)
    try:
        return document_to_wire(file)
    except UnsupportedContentError as exc:
        # A tool's file is not the caller's request: the model is told it is not shown.
        return {"type": "input_text", "text": unseen_file_note(file, str(exc))}


def image_to_wire(part: ImagePart) -> Json:
    """An image as `input_image` (inline bytes as a `data:` URL; `detail` is required)."""
    return {"type": "input_image", "image_url": image_url(part), "detail": "auto"}


_AUDIO_ELSEWHERE: Final = "send audio through Chat Completions (openai:), with an audio model"


def document_to_wire(part: DocumentPart) -> Json:
    """A document as `input_file`: its bytes as `file_data`, or its URL as `file_url`.

    Raises:
        UnsupportedContentError: audio or video, which the Responses API takes no input of.
    """
    kind = part.media_type.partition("/")[0]
    if kind in ("audio", "video"):
        raise UnsupportedContentError(
            f"{kind} ({document_name(part)}, {part.media_type}): the Responses API takes no "
            f"{kind} input; " + (_AUDIO_ELSEWHERE if kind == "audio" else "Gemini reads video")
        )
    source = part.source
    if isinstance(source, Base64Source):
        data = data_url(part.media_type, source)
        return {"type": "input_file", "filename": document_name(part), "file_data": data}
    return {"type": "input_file", "file_url": source.url}


def assistant_items(parts: Sequence[ContentPart], *, stored: bool = False) -> list[Json]:
    """An assistant message as items in its own order: text, reasoning, function calls.

    Order matters: a reasoning item must come right before the item it led
    to (a call, or the message), or the API rejects it. Text runs become
    assistant messages; `ThinkingPart`s are left out (their reasoning item
    travels as this provider's `RawPart`); other providers' `RawPart`s are dropped.
    """
    items: list[Json] = []
    texts: list[str] = []

    def flush() -> None:
        if texts:
            items.append({"role": "assistant", "content": "\n".join(texts)})
            texts.clear()

    shown = False  # the image just before went back as the API's own item
    for part in parts:
        after_item, shown = shown, False
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ToolUsePart):
            flush()
            items.append(approval_request_to_wire(part) or function_call_to_wire(part))
        elif isinstance(part, RawPart):
            kept = (
                reasoning_to_wire(part, stored=stored)
                or approved_call_to_wire(part)
                or image_call_to_wire(part, stored=stored)
            )
            if kept is not None:
                flush()
                items.append(kept)
                shown = kept.get("type") == "image_generation_call"
        elif isinstance(part, ImagePart) and after_item:
            continue  # the API has it, by its call's id
        elif isinstance(part, ImagePart | DocumentPart):
            # A file another model made, or one made unstored: the API takes none from the
            # assistant.
            texts.append(made_file_note(part))
        elif isinstance(part, ToolResultPart):
            raise UnsupportedContentError(f"an assistant message cannot hold {part_kind(part)}")
    flush()
    return items


def function_call_to_wire(part: ToolUsePart) -> Json:
    """A tool call as the `function_call` item the model wrote (`arguments` a JSON string).

    Sent without the item's own `id`: with `store: false` the API has no item
    to match it against, and `call_id` is what pairs it with its output.
    """
    return {
        "type": "function_call",
        "call_id": part.id,
        "name": part.name,
        "arguments": arguments_text(part),
    }


def reasoning_to_wire(part: RawPart, *, stored: bool = False) -> Json | None:
    """This provider's reasoning item, to send back; None for anything else.

    An item without `encrypted_content` is sent only to a stored call: on a
    stateless one the API would look its id up, find nothing and fail the call.
    """
    data = part.data
    if part.provider != PROVIDER or not isinstance(data, dict) or data.get("type") != "reasoning":
        return None
    if not isinstance(data.get("encrypted_content"), str) and not stored:
        logger.debug("reasoning item %r has no encrypted content; not sent back", data.get("id"))
        return None
    return dict(data)


def approved_call_to_wire(part: RawPart) -> Json | None:
    """This provider's record of a remote MCP call run once approved, to send back; else None.

    Why: it closes the request and the decision before it, so the API sees the
    call done rather than a "yes" still to act on.
    """
    data = part.data
    if part.provider != PROVIDER or not isinstance(data, dict) or data.get("type") != "mcp_call":
        return None
    return dict(data)


def image_call_to_wire(part: RawPart, *, stored: bool = False) -> Json | None:
    """This provider's image call, by its id, on a stored call; None otherwise.

    Why only stored: the API takes a past `image_generation_call` by its id (as
    pydantic-ai sends it), which it looks up, and a call with `store: false`
    kept nothing to find; the image then goes back as the note naming it
    (`made_file_note`), the image itself being in the history as an `ImagePart`.
    """
    data = part.data
    if part.provider != PROVIDER or not isinstance(data, dict):
        return None
    if data.get("type") != "image_generation_call" or not stored:
        return None
    item_id = data.get("id")
    return {"type": "image_generation_call", "id": item_id} if isinstance(item_id, str) else None


# --- response ---------------------------------------------------------------


def parse_response(data: object, *, fallback_model: str) -> Completion:
    """Read a Responses API response object (already JSON-decoded).

    Output items the loop cannot use (a built-in tool's call, say) are
    skipped with a debug log; an answer made only of such items is an error,
    since ending the turn on it would hide what the model did.

    Raises:
        MalformedResponseError: `data` is not a finished response with an `output` list,
            or holds nothing but items this provider cannot read.
        FailedResponseError: the response's status is `failed`.
        CancelledResponseError: the response's status is `cancelled` (a background one).
    """
    if not isinstance(data, dict):
        raise MalformedResponseError("the body is not a JSON object")
    # Only a string is a status: a list or object sent as one is no set member (TypeError).
    status = data.get("status") if isinstance(data.get("status"), str) else None
    if status == "failed" or data.get("error"):
        raise FailedResponseError(data.get("error"))
    if status == "cancelled":
        # What a cancelled response holds is a part at most: never an answer to go on from.
        raise CancelledResponseError(data.get("id"))
    if status in _UNFINISHED:
        raise MalformedResponseError(f"the response is not finished (status {status!r})")
    output = data.get("output")
    if not isinstance(output, list):
        raise MalformedResponseError("the body has no output list")
    content, skipped = parse_output(output)
    if skipped and not content:
        raise MalformedResponseError(f"the output holds only items of unsupported types {skipped}")
    model = data.get("model")
    calls = hosted_calls(output)
    return Completion(
        content=content,
        stop_reason=stop_reason(status, data.get("incomplete_details"), content),
        usage=parse_usage(data.get("usage")),
        model=model if isinstance(model, str) and model else fallback_model,
        hosted_calls=calls,
        web_searches=web_searches(calls) if calls else 0,
    )


_HOSTED_ITEMS: Final = {
    "web_search_call": "web_search",
    "code_interpreter_call": "code_execution",
    "mcp_call": "mcp",
    "image_generation_call": "image_generation",
}


def hosted_calls(items: Iterable[object]) -> tuple[HostedToolCall, ...]:
    """The built-in tools' calls among the output `items`: a search's action, the code run.

    Read for the record only (these items are not sent back); a field of
    another shape is left out, never an error. An MCP server's listing of its
    tools (`mcp_list_tools`) is no call and is left out, unless it failed: then
    it is recorded as an `mcp` call with no tool and the listing's error, so a
    caller sees why the model had none of the server's tools.
    """
    calls: list[HostedToolCall] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "mcp_list_tools" and item.get("error"):
            calls.append(HostedToolCall("mcp", failed_listing(item)))
            continue
        if not isinstance(item, dict):
            continue
        # Only a string is a type: a list or object sent as one is no dict key (TypeError).
        kind = item.get("type")
        if not isinstance(kind, str) or kind not in _HOSTED_ITEMS:
            continue
        name = _HOSTED_ITEMS[kind]
        detail: JsonValue
        if name == "mcp":
            detail = mcp_call_input(item)
        elif name == "image_generation":
            detail = image_call_input(item)
        elif name == "web_search":
            detail = item.get("action")
        else:
            detail = {"code": item.get("code")}
        calls.append(HostedToolCall(name, detail if isinstance(detail, dict) else None))
    return tuple(calls)


def image_call_input(item: Mapping[str, JsonValue]) -> Json:
    """An `image_generation_call` item's record: the image's media type and size, never its bytes.

    `bytes` is the decoded size (None: no image came), `revised_prompt` the prompt the
    image model was given, `quality` and `size` what it made (what the price is read from;
    None when the item does not say), `status` the item's, and `error` its error, if any.
    """
    result = item.get("result")
    made = isinstance(result, str) and bool(result)
    record: Json = {
        "media_type": image_media_type(item) if made else None,
        "bytes": decoded_size(result) if isinstance(result, str) and made else None,
    }
    for key in ("revised_prompt", "quality", "size", "status"):
        value = item.get(key)
        record[key] = value if isinstance(value, str) else None
    record["error"] = item.get("error")
    return record


def mcp_call_input(item: Mapping[str, JsonValue]) -> Json:
    """An `mcp_call` item's record: which server and tool, given what, and its error.

    `arguments` is the JSON the model wrote, parsed (the raw string when it does
    not parse); `error` is the item's error (None: the call succeeded). The
    call's `output` is left out, as the other hosted calls' results are: the
    record says what was run, the answer's text says what came of it.
    """
    server, tool = item.get("server_label"), item.get("name")
    return {
        "server": server if isinstance(server, str) else None,
        "tool": tool if isinstance(tool, str) else None,
        # As a function call's: the decoded JSON, else the text as written.
        "arguments": parse_arguments(item.get("arguments"), tool),
        "error": item.get("error"),
    }


def failed_listing(item: Mapping[str, JsonValue]) -> Json:
    """A failed `mcp_list_tools` item's record: the server, no tool, and the listing's error."""
    server = item.get("server_label")
    return {
        "server": server if isinstance(server, str) else None,
        "tool": None,
        "arguments": None,
        "error": item.get("error"),
    }


def web_searches(calls: Iterable[HostedToolCall]) -> int:
    """How many web searches to bill among the answer's hosted `calls`: every `web_search_call`.

    OpenAI's web search guide (https://platform.openai.com/docs/guides/tools-web-search,
    "Output and citations") says `search` actions incur a tool call cost (the pricing
    page's fee per 1,000 calls) and says nothing either way of the `open_page` and
    `find_in_page` actions reasoning models take; an item may also come without an
    action. So every item counts, whatever its action: for a budget (`max_cost`), a
    page opened counted as a search beats a search left out.
    """
    return sum(1 for call in calls if call.name == "web_search")


def code_executions(calls: Iterable[HostedToolCall]) -> int:
    """How many code runs among the answer's hosted `calls`: every `code_interpreter_call`.

    None is priced: their container's fee is left out of the cost, and the loop
    warns of them (`ProviderResponse.unpriced_code_executions`).
    """
    # OpenAI's pricing page (https://developers.openai.com/api/docs/pricing#built-in-tools,
    # read 2026-11-29) bills a Code Interpreter container by its memory: $0.03 (1 GB, the
    # default), $0.12 (4 GB), $0.48 (16 GB), $1.92 (64 GB) per 20 minutes; since
    # 2026-06-02 (the API changelog) per minute, with a 5-minute minimum. A response
    # says neither how long its container has run nor when it expires, and an `auto`
    # container is made for the request and may be reused by later ones, so no call's
    # share is exact: each run is counted, never priced at $0.
    return sum(1 for call in calls if call.name == "code_execution")


def parse_output(items: Iterable[object]) -> tuple[list[ContentPart], list[str]]:
    """The parts the output items map to, and the types of the items skipped."""
    content: list[ContentPart] = []
    skipped: list[str] = []
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if isinstance(item, dict) and kind == "message":
            content.extend(parse_message(item))
        elif isinstance(item, dict) and kind == "function_call":
            content.append(parse_function_call(item))
        elif isinstance(item, dict) and kind == "reasoning":
            content.extend(parse_reasoning(item))
        elif isinstance(item, dict) and kind == "mcp_approval_request":
            content.append(parse_approval_request(item))
        elif isinstance(item, dict) and kind == "mcp_call" and item.get("approval_request_id"):
            # Kept to go back: see `approved_call_to_wire`.
            content.append(RawPart(PROVIDER, item))
        elif isinstance(item, dict) and kind == "image_generation_call":
            content.extend(parse_image_call(item))
        else:
            what = kind if isinstance(kind, str) else type(item).__name__
            logger.debug("output item of type %r skipped: the loop has no use for it", what)
            skipped.append(what)
    return content, skipped


_FORMAT_TYPES: Final[Mapping[str, str]] = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "webp": "image/webp",
    "gif": "image/gif",
    "svg": "image/svg+xml",
}
_MAGIC: Final[tuple[tuple[bytes, str], ...]] = (
    (b"\x89PNG", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
)


def parse_image_call(item: Mapping[str, JsonValue]) -> list[ContentPart]:
    """An `image_generation_call` item: the call kept by its id, then the image it made.

    The `RawPart` (`{"type", "id"}`, the image's bytes left out) goes back on a stored
    call (`image_call_to_wire`); the `ImagePart` is the answer's image, its media type
    the item's `output_format` (else read from the image's first bytes, else PNG). A
    call that made no image (failed, moderated, an empty or oversized `result`) is a
    note in the image's place, naming the call and why, so the turn goes on and says so.

    Raises:
        MalformedResponseError: the `result` is not base64 (an image that cannot be read).
    """
    item_id = item.get("id")
    name = item_id if isinstance(item_id, str) and item_id else "(no id)"
    parts: list[ContentPart] = []
    if isinstance(item_id, str) and item_id:
        parts.append(RawPart(PROVIDER, {"type": "image_generation_call", "id": item_id}))
    result = item.get("result")
    status = item.get("status")
    if not isinstance(result, str) or not result or status == "failed":
        parts.append(TextPart(_no_image_note(name, item)))
        return parts
    if len(result) > MAX_IMAGE_BASE64:
        megabytes = decoded_size(result) // (1024 * 1024)
        parts.append(
            TextPart(
                f"[The image generation call {name} made an image of about {megabytes} MiB, "
                f"over the {MAX_IMAGE_BASE64 * 3 // 4 // (1024 * 1024)} MiB this provider "
                "keeps; it is left out]"
            )
        )
        return parts
    try:
        base64.b64decode(result, validate=True)
    except (binascii.Error, ValueError):
        raise MalformedResponseError(
            f"the image_generation_call {name!r} has a result that is not base64"
        ) from None
    parts.append(ImagePart(Base64Source(data=result), image_media_type(item)))
    return parts


def _no_image_note(name: str, item: Mapping[str, JsonValue]) -> str:
    error = item.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    why = message if isinstance(message, str) and message else f"status {item.get('status')!r}"
    return f"[The image generation call {name} made no image: {why[:300]}]"


def image_media_type(item: Mapping[str, JsonValue]) -> str:
    """The media type of an image call's image: its `output_format`, else its first bytes'."""
    fmt = item.get("output_format")
    if isinstance(fmt, str) and fmt in _FORMAT_TYPES:
        return _FORMAT_TYPES[fmt]
    result = item.get("result")
    if isinstance(result, str):
        try:
            head = base64.b64decode(result[:32] + "=" * (-len(result[:32]) % 4))
        except (binascii.Error, ValueError):
            head = b""
        for magic, media_type in _MAGIC:
            if head.startswith(magic):
                return media_type
        if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            return "image/webp"
    return "image/png"


def decoded_size(data: str) -> int:
    """How many bytes base64 `data` holds, counted from its length (no decoding)."""
    return len(data.rstrip("=")) * 3 // 4


def parse_message(item: Mapping[str, JsonValue]) -> list[ContentPart]:
    """A `message` item's text: its `output_text` parts, or its refusal, as one `TextPart`.

    A refusal becomes the answer's text, as the Chat provider reads it.
    """
    content = item.get("content")
    texts = _texts(content, "output_text")
    text = "".join(texts) or "".join(_texts(content, "refusal", field="refusal"))
    return [TextPart(text)] if text else []


def parse_function_call(item: Mapping[str, JsonValue]) -> ToolUsePart:
    """A `function_call` item; its `call_id` is the id the loop pairs the result with.

    Arguments that are not JSON are kept as the raw string (see
    `_wire.parse_tool_call`); a call without a `call_id` gets one.
    """
    call_id = item.get("call_id")
    name = item.get("name")
    if not isinstance(call_id, str) or not call_id or call_id.startswith(HOSTED_ID_PREFIX):
        # A request's prefix is ours alone: a function call never passes for one.
        call_id = new_call_id()
    return ToolUsePart(
        id=call_id,
        name=name if isinstance(name, str) else "",
        input=parse_arguments(item.get("arguments"), name),
    )


def parse_approval_request(item: Mapping[str, JsonValue]) -> ToolUsePart:
    """An `mcp_approval_request` item: the call named `mcp` the turn pauses on.

    Raises:
        MalformedResponseError: it has no id, server label or tool name (the decision
            could name no request).
    """
    request_id, server, tool = item.get("id"), item.get("server_label"), item.get("name")
    if not (isinstance(request_id, str) and request_id and isinstance(server, str)):
        raise MalformedResponseError("an mcp_approval_request without an id or a server_label")
    if not isinstance(tool, str):
        raise MalformedResponseError(f"the mcp_approval_request {request_id!r} names no tool")
    arguments = parse_arguments(item.get("arguments"), tool)
    call_input = hosted_call_input(server, tool, arguments)
    return ToolUsePart(hosted_call_id(request_id), HOSTED_CALL, call_input)


def new_call_id() -> str:
    """An id for a call the server sent without one, shaped like OpenAI's."""
    return f"call_{uuid.uuid4().hex[:24]}"


def parse_reasoning(item: Mapping[str, JsonValue]) -> list[ContentPart]:
    """A `reasoning` item: its readable text as a `ThinkingPart`, itself as a `RawPart`.

    The text is the summary (OpenAI's models), else the `reasoning_text`
    content (open-weight models on compatible servers). The `RawPart` keeps
    what the API needs back (`id`, `summary`, `encrypted_content`, `content`);
    an item without an id cannot be sent back and is kept as text only.
    """
    text = "\n\n".join(_texts(item.get("summary"), "summary_text")) or "".join(
        _texts(item.get("content"), "reasoning_text")
    )
    parts: list[ContentPart] = [ThinkingPart(text)] if text else []
    item_id = item.get("id")
    if isinstance(item_id, str) and item_id:
        summary = item.get("summary")
        kept: Json = {"type": "reasoning", "id": item_id}
        kept["summary"] = summary if isinstance(summary, list) else []
        for key in ("encrypted_content", "content"):
            value = item.get(key)
            if value is not None:
                kept[key] = value
        parts.append(RawPart(PROVIDER, kept))
    return parts


def _texts(parts: object, kind: str, *, field: str = "text") -> list[str]:
    """The `field` strings of the parts of type `kind` (anything malformed is passed over)."""
    if not isinstance(parts, list):
        return []
    found: list[str] = []
    for part in parts:
        value = part.get(field) if isinstance(part, dict) and part.get("type") == kind else None
        if isinstance(value, str):
            found.append(value)
    return found


def stop_reason(
    status: object, incomplete_details: object, content: Sequence[ContentPart]
) -> StopReason:
    """Map `status` and `incomplete_details.reason`; otherwise any tool call means `tool_use`.

    An incomplete response says why (`max_output_tokens`, `content_filter`),
    which wins over a tool call whose arguments may have been cut short.
    """
    if status == "incomplete":
        reason = incomplete_details.get("reason") if isinstance(incomplete_details, dict) else None
        # An incomplete answer was cut short, whatever reason it gives.
        mapped = _INCOMPLETE_REASONS.get(reason) if isinstance(reason, str) else None
        return mapped or "max_tokens"
    if any(isinstance(part, ToolUsePart) for part in content):
        return "tool_use"
    return "end_turn"


def parse_usage(usage: object) -> TokenUsage:
    """Read `usage`: `input_tokens` includes the cached ones, reported as cache reads.

    `output_tokens_details.reasoning_tokens` are part of `output_tokens` (and
    billed as output), so they need no field of their own.
    """
    if not isinstance(usage, dict):
        return TokenUsage()
    details = usage.get("input_tokens_details")
    details = details if isinstance(details, dict) else {}
    return TokenUsage(
        input_tokens=token_count(usage.get("input_tokens")),
        output_tokens=token_count(usage.get("output_tokens")),
        cache_read_tokens=optional_token_count(details.get("cached_tokens")),
        cache_creation_tokens=optional_token_count(details.get("cache_write_tokens")),
    )
