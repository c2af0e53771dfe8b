"""Pure mapping between the loop's provider types and Anthropic Messages JSON (no I/O).

Request side: `build_body` turns a `ProviderRequest` into the `POST /v1/messages`
body. Response side: `parse_message` turns the message JSON into content parts,
a stop reason and usage. Blocks the loop has no type for (redacted thinking,
server tool blocks) become `RawPart`s so they go back to the API unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias, assert_never, cast

from pydantic import JsonValue

from layer0 import Base64Source, UrlSource
from neuron_tool.schema import ToolSchema
from neuron_turn.loop.hosted_tools import (
    HostedMCP,
    HostedTool,
    HostedToolCall,
    WebFetch,
    WebSearch,
)
from neuron_turn.loop.provider import (
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
from neuron_turn.loop.provider_errors import InvalidRequestError
from neuron_turn.loop.sampling import SamplingSetting
from neuron_turn.loop.tool_choice import ToolChoice
from neuron_turn.loop.tool_files import made_file_as_text, unseen_file_note

from ._mcp import MCP_BETA, mcp_call, mcp_servers_json, mcp_toolset_json
from ._name import PROVIDER
from ._output_format import output_format_json
from ._strict_tools import check_strict_limits, strict_tool_json
from ._thinking import thinking_fields

JsonObject: TypeAlias = dict[str, JsonValue]

_STOP_REASONS: Final[dict[str, StopReason]] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    # pause_turn: a long server-tool turn paused; the provider continues it
    # (`continued_body`), and maps it so only when its continuations run out.
    "pause_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "content_filter",
}
_TRUNCATING: Final = frozenset({"max_tokens", "model_context_window_exceeded"})


class WireError(ValueError):
    """The API's JSON is not the shape the Messages API reference documents."""


@dataclass(frozen=True, slots=True)
class ParsedMessage:
    """A Messages API response, mapped to the loop's types."""

    content: tuple[ContentPart, ...]
    stop_reason: StopReason
    truncated: bool
    usage: TokenUsage
    raw_usage: JsonObject
    """The `usage` object as sent, for pricing (it also holds cache TTLs and server tool counts)."""
    model: str
    paused: bool = False
    """The API paused a long turn of its own tools (`pause_turn`): sent back, it goes on."""
    hosted_calls: tuple[HostedToolCall, ...] = ()
    """Its server tools' calls (`server_tool_use` and `mcp_tool_use` blocks), for the record."""


# --- request ------------------------------------------------------------------


def build_body(
    request: ProviderRequest,
    *,
    model: str,
    max_tokens: int,
    stream: bool = False,
    cache: bool = False,
) -> JsonObject:
    """Return the `POST /v1/messages` body for `request`.

    With `cache`, the body marks its prefix for the prompt cache (`mark_cache`).

    `model` and `max_tokens` are used when the request leaves them unset (the API
    requires `max_tokens`). `request.extra` is merged last, so it may override
    any key, except `"metadata"` (the caller's trace ids), which is never sent:
    Anthropic's own `metadata` accepts only `user_id` and rejects other keys.
    The tool choice goes with the tools (see `tool_choice_json`).

    Raises:
        InvalidRequestError: a message cannot be expressed in the Messages API, a
            thinking setting the model cannot take, or a native output schema or
            strict tools the API's structured outputs cannot ask for.
    """
    system, messages = _messages_json(request.messages)
    if request.system:
        system.insert(0, request.system)
    body: JsonObject = {
        "model": request.model or model,
        "max_tokens": request.max_tokens if request.max_tokens is not None else max_tokens,
        "messages": messages,
    }
    if system:
        body["system"] = "\n".join(system)
    tools = tools_json(request.tools)
    tools.extend(hosted_tool_json(tool) for tool in request.hosted_tools)
    if tools:
        body["tools"] = tools
    servers = mcp_servers_json(request.hosted_tools)
    if servers:
        body["mcp_servers"] = servers
    if request.tools:
        choice = tool_choice_json(request.tool_choice, request.parallel_tool_calls)
        if choice is not None:
            body["tool_choice"] = choice
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.sampling is not None:
        body.update(request.sampling.as_fields(SAMPLING_FIELDS))
    _add_output_config(body, request)
    if stream:
        body["stream"] = True
    _merge_extra(body, request.extra)
    _relax_forced_choice(body)
    if cache:
        mark_cache(body)
    return body


_EPHEMERAL: Final = {"type": "ephemeral"}
_CACHEABLE: Final = frozenset({"text", "image", "document", "tool_use", "tool_result"})


def mark_cache(body: JsonObject) -> None:
    """Mark `body`'s system prompt, tools and conversation so far for the prompt cache.

    Three `cache_control` breakpoints (the API allows four): the last tool, the
    system prompt, and the last block of the last message that can carry one
    (not a thinking block). The API caches each prefix and, on the next call,
    reads the longest one it wrote (it looks back about 20 blocks from a
    breakpoint), so each model call of a turn reads what the one before wrote.
    """
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[-1], dict):
        tools[-1] = {**tools[-1], "cache_control": dict(_EPHEMERAL)}
    system = body.get("system")
    if isinstance(system, str) and system:
        body["system"] = [{"type": "text", "text": system, "cache_control": dict(_EPHEMERAL)}]
    messages = body.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    content = last.get("content") if isinstance(last, dict) else None
    if isinstance(content, list):
        for index in range(len(content) - 1, -1, -1):
            block = content[index]
            if isinstance(block, dict) and block.get("type") in _CACHEABLE:
                content[index] = {**block, "cache_control": dict(_EPHEMERAL)}
                return


SAMPLING_FIELDS: Final[Mapping[SamplingSetting, str]] = {
    "top_p": "top_p",
    "top_k": "top_k",
    "stop_sequences": "stop_sequences",
}
"""The sampling settings the Messages API takes, by body field (no seed, no penalties)."""


def _add_output_config(body: JsonObject, request: ProviderRequest) -> None:
    # The native answer's format and the thinking effort share `output_config`.
    config: JsonObject = {}
    if request.output is not None:
        config["format"] = output_format_json(request.output)
    if request.thinking is not None and "thinking" not in request.extra:
        limit = body["max_tokens"]
        model = str(body["model"])
        thinking, effort = thinking_fields(
            request.thinking, model, limit if isinstance(limit, int) else 0
        )
        if thinking is not None:
            body["thinking"] = thinking
        if effort is not None:
            config["effort"] = effort
    if config:
        body["output_config"] = config


def _merge_extra(body: JsonObject, extra: Mapping[str, JsonValue]) -> None:
    # `output_config` holds both the effort and the answer's format: a caller's own
    # keys go in beside ours rather than dropping them.
    for key, value in extra.items():
        ours = body.get(key)
        if key == "output_config" and isinstance(ours, dict) and isinstance(value, dict):
            body[key] = {**ours, **value}
        elif key != "metadata":
            body[key] = value


def _relax_forced_choice(body: JsonObject) -> None:
    """With extended thinking on, send a forced tool choice (`any`, `tool`) as `auto`.

    The API refuses a forced choice next to thinking; a typed turn still gets its
    answer, since the loop validates a text answer and otherwise asks for the tool.
    """
    thinking, choice = body.get("thinking"), body.get("tool_choice")
    thinking_on = isinstance(thinking, dict) and thinking.get("type") not in (None, "disabled")
    if thinking_on and isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        relaxed: JsonObject = {"type": "auto"}
        if "disable_parallel_tool_use" in choice:
            relaxed["disable_parallel_tool_use"] = choice["disable_parallel_tool_use"]
        body["tool_choice"] = relaxed


def tools_json(tools: Sequence[ToolSchema]) -> list[JsonValue]:
    """Return the body's `tools` entries for `tools`, a strict one with `strict: true`.

    Raises:
        InvalidRequestError: a strict tool's schema has no form in structured
            outputs' subset, or the strict tools pass the API's stated limits.
    """
    entries: list[JsonValue] = []
    strict: list[JsonObject] = []
    for tool in tools:
        if tool.strict:
            entry = strict_tool_json(tool)
            strict.append(entry)
            entries.append(entry)
        else:
            entries.append(tool_json(tool))
    if strict:
        check_strict_limits(strict)
    return entries


def tool_json(tool: ToolSchema) -> JsonValue:
    """Return the body's `tools` entry for a tool that is not strict: its schema as it is."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


HOSTED_TOOLS: Final = frozenset({"web_search", "web_fetch", "code_execution", "mcp"})
"""The hosted tools the Messages API runs (`neuron_turn.WebSearch`, ..., `HostedMCP`)."""

_HOSTED_TYPES: Final = {
    "web_search": "web_search_20250305",
    "web_fetch": "web_fetch_20250910",
    "code_execution": "code_execution_20250825",
}
_HOSTED_BETAS: Final = {
    "web_fetch": "web-fetch-2025-09-10",
    "code_execution": "code-execution-2025-08-25",
    "mcp": MCP_BETA,
}


def hosted_tool_json(tool: HostedTool) -> JsonObject:
    """Return the server tool entry of the body's `tools` list for hosted `tool`.

    A `HostedMCP` server is an `mcp_toolset` entry (its server goes in the
    body's `mcp_servers`, see `_mcp`).

    Raises:
        InvalidRequestError: a hosted tool this API does not run.
    """
    if isinstance(tool, HostedMCP):
        return mcp_toolset_json(tool)
    kind = _HOSTED_TYPES.get(tool.name)
    if kind is None:
        raise InvalidRequestError(
            f"Anthropic does not run the hosted tool {tool.name!r}", provider=PROVIDER
        )
    entry: JsonObject = {"type": kind, "name": tool.name}
    if isinstance(tool, WebSearch | WebFetch):
        if tool.max_uses is not None:
            entry["max_uses"] = tool.max_uses
        if tool.allowed_domains:
            entry["allowed_domains"] = list(tool.allowed_domains)
        if tool.blocked_domains:
            entry["blocked_domains"] = list(tool.blocked_domains)
    if isinstance(tool, WebSearch) and tool.user_location is not None:
        entry["user_location"] = {"type": "approximate", **tool.user_location.as_dict()}
    return entry


def hosted_betas(tools: Sequence[HostedTool]) -> list[str]:
    """The `anthropic-beta` flags the hosted `tools` need (web fetch, code execution, MCP).

    Each flag once, however many MCP servers need it.
    """
    betas = (beta for tool in tools if (beta := _HOSTED_BETAS.get(tool.name)) is not None)
    return list(dict.fromkeys(betas))


def continued_body(body: JsonObject, paused: ParsedMessage) -> JsonObject:
    """Return `body` with `paused`'s answer so far as its last assistant message, to go on.

    The API continues a paused turn from the assistant message it ends with; a
    second pause extends that message, so it always holds the whole answer so far.
    """
    blocks: list[JsonValue] = [
        block for part in paused.content if (block := block_json(part)) is not None
    ]
    messages = list(cast(list[JsonValue], body["messages"]))
    last = messages[-1] if messages else None
    if isinstance(last, dict) and last.get("role") == "assistant":
        messages[-1] = {**last, "content": [*cast(list[JsonValue], last["content"]), *blocks]}
    else:
        messages.append({"role": "assistant", "content": blocks})
    return {**body, "messages": messages}


def tool_choice_json(choice: ToolChoice | None, parallel: bool | None) -> JsonValue | None:
    """Return the body's `tool_choice`: `{"type": "auto"|"none"|"any"|"tool", ...}`.

    `required` is the API's `any`. Forbidding parallel calls is the API's
    `disable_parallel_tool_use`, which rides on the choice (`auto` when none is given);
    `none` takes no such flag.
    """
    if choice is None and parallel is not False:
        return None
    mode = "auto" if choice is None else choice.mode
    result: JsonObject = {"type": "any" if mode == "required" else mode}
    if choice is not None and choice.name is not None:
        result["name"] = choice.name
    if parallel is False and mode != "none":
        result["disable_parallel_tool_use"] = True
    return result


def _messages_json(messages: Sequence[ProviderMessage]) -> tuple[list[str], list[JsonValue]]:
    """Split off system text and merge consecutive same-role messages into one."""
    system: list[str] = []
    turns: list[tuple[str, list[JsonValue]]] = []
    for message in messages:
        if message.role == "system":
            system.append(_system_text(message))
            continue
        parts = message.content
        if message.role == "assistant":
            # The API refuses image blocks within assistant turns (another model made them).
            parts = [made_file_as_text(part) for part in parts]
        blocks: list[JsonValue] = [
            block for part in parts if (block := block_json(part)) is not None
        ]
        if message.role == "assistant" or len(blocks) > 1:
            # The API refuses an empty text block, and a model's answer may hold one
            # (an empty stream, a compatible server): sent, it would fail every later
            # request of the session. A caller's own empty message is left to the API.
            blocks = [block for block in blocks if block != _EMPTY_TEXT]
        if not blocks:
            continue
        if turns and turns[-1][0] == message.role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((message.role, blocks))
    return system, [{"role": role, "content": blocks} for role, blocks in turns]


_EMPTY_TEXT: Final = {"type": "text", "text": ""}


def _system_text(message: ProviderMessage) -> str:
    """Return a system message's text; the API's `system` field holds text only."""
    texts: list[str] = []
    for part in message.content:
        if not isinstance(part, TextPart):
            raise InvalidRequestError(
                f"a system message may hold only text for Anthropic; got {type(part).__name__}",
                provider=PROVIDER,
            )
        texts.append(part.text)
    return "\n".join(texts)


_CALL_ID: Final = re.compile(r"[A-Za-z0-9_-]+")
_NOT_IN_CALL_ID: Final = re.compile(r"[^A-Za-z0-9_-]")


def api_call_id(call_id: str) -> str:
    """Return `call_id` as the API takes a `tool_use` id (`^[a-zA-Z0-9_-]+$`); itself if it fits.

    A conversation begun with another provider holds its ids, which may not fit
    (`functions.edit:0`); the API would refuse the whole request. Such an id is
    sent as its fitting characters, the rest replaced by `_`, and a digest of
    the whole id: the same for a call and its result, and different for two ids
    that differ only in what was replaced.
    """
    if _CALL_ID.fullmatch(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{_NOT_IN_CALL_ID.sub('_', call_id)}_{digest}"


def block_json(part: ContentPart) -> JsonValue | None:
    """Return the content block for `part`, or None for a part this API cannot take.

    Dropped: thinking without a signature (another provider's reasoning; the API
    rejects unsigned thinking) and `RawPart`s of other providers.
    """
    match part:
        case TextPart(text=text):
            return {"type": "text", "text": text}
        case ImagePart(source=source, media_type=media_type):
            return {"type": "image", "source": _image_source(source, media_type)}
        case DocumentPart():
            return _document_json(part)
        case ToolUsePart(id=id_, name=name, input=input_):
            return {"type": "tool_use", "id": api_call_id(id_), "name": name, "input": input_}
        case ToolResultPart(tool_use_id=tool_use_id, is_error=is_error):
            return {
                "type": "tool_result",
                "tool_use_id": api_call_id(tool_use_id),
                "content": _tool_result_content(part),
                "is_error": is_error,
            }
        case ThinkingPart(thinking=thinking, signature=signature):
            if not signature:
                return None
            return {"type": "thinking", "thinking": thinking, "signature": signature}
        case RawPart(provider=provider, data=data):
            return data if provider == PROVIDER else None
        case _:
            assert_never(part)


def _tool_result_content(part: ToolResultPart) -> JsonValue:
    """A tool result's `content`: its text, or text then file blocks when it returned files.

    Without files it stays a plain string, as recorded conversations hold it.
    The text block is left out when the text is empty: the API refuses an
    empty text block.
    """
    if not part.files:
        return part.content
    blocks: list[JsonValue] = [{"type": "text", "text": part.content}] if part.content else []
    blocks.extend(_tool_file_json(file) for file in part.files)
    return blocks


def _tool_file_json(file: ImagePart | DocumentPart) -> JsonValue:
    """A file a tool returned as a block of its result, or a note when the API takes no such file.

    A tool's file is not the caller's request, so a document the API cannot
    read does not fail the call: the model is told in its place instead.
    """
    if isinstance(file, ImagePart):
        return {"type": "image", "source": _image_source(file.source, file.media_type)}
    if not _document_readable(file):
        kind = f"{file.media_type} by {file.source.type}"
        why = f"Anthropic reads PDF and plain-text documents, not {kind}"
        return {"type": "text", "text": unseen_file_note(file, why)}
    return _document_json(file)


def _document_readable(part: DocumentPart) -> bool:
    """Whether the Messages API takes a document of this media type and source."""
    return part.media_type == "application/pdf" or (
        part.media_type == "text/plain" and isinstance(part.source, Base64Source)
    )


def _document_json(part: DocumentPart) -> JsonValue:
    """A `document` block: a PDF by its bytes or URL, or plain text (sent as text).

    Raises:
        InvalidRequestError: a media type the Messages API takes no document of.
    """
    source = part.source
    if not _document_readable(part):
        raise InvalidRequestError(
            f"Anthropic takes documents of application/pdf (bytes or URL) and text/plain "
            f"(bytes), not {part.media_type} by {source.type}",
            provider=PROVIDER,
        )
    if isinstance(source, Base64Source) and part.media_type == "text/plain":
        text = base64.b64decode(source.data).decode("utf-8", "replace")
        wire: JsonValue = {"type": "text", "media_type": "text/plain", "data": text}
    else:
        wire = _image_source(source, part.media_type)
    block: dict[str, JsonValue] = {"type": "document", "source": wire}
    if part.name:
        block["title"] = part.name
    return block


def _image_source(source: Base64Source | UrlSource, media_type: str) -> JsonValue:
    if isinstance(source, Base64Source):
        return {"type": "base64", "media_type": media_type, "data": source.data}
    return {"type": "url", "url": source.url}


# --- response -----------------------------------------------------------------


def parse_message(data: object) -> ParsedMessage:
    """Map a decoded `type: "message"` response to the loop's types.

    Raises:
        WireError: `data` is not a Messages API message.
    """
    message = as_object(data, "the response")
    if message.get("type") != "message":
        raise WireError(f"expected an object of type 'message', got type {message.get('type')!r}")
    content = tuple(parse_block(block) for block in _list(message, "content"))
    raw_stop = message.get("stop_reason")
    raw_usage = as_object(message.get("usage"), "usage")
    return ParsedMessage(
        content=content,
        stop_reason=stop_reason(raw_stop, content),
        truncated=isinstance(raw_stop, str) and raw_stop in _TRUNCATING,
        usage=parse_usage(raw_usage),
        raw_usage=raw_usage,
        model=_str(message, "model"),
        paused=raw_stop == "pause_turn",
        hosted_calls=hosted_calls(content),
    )


def hosted_calls(content: Sequence[ContentPart]) -> tuple[HostedToolCall, ...]:
    """The server tools' calls among `content`, by the hosted tool they belong to.

    Code execution's own tools (`bash_code_execution`, `text_editor_code_execution`)
    count as `code_execution`; a server tool this mapping does not know keeps its name.
    An MCP server's call (`mcp_tool_use`) is `mcp`, with its server, tool and arguments.
    """
    calls: list[HostedToolCall] = []
    for part in content:
        data = part.data if isinstance(part, RawPart) else None
        if not isinstance(data, dict):
            continue
        mcp = mcp_call(data)
        if mcp is not None:
            calls.append(mcp)
            continue
        if data.get("type") != "server_tool_use":
            continue
        name = str(data.get("name", ""))
        hosted = "code_execution" if name.endswith("code_execution") else name
        calls.append(HostedToolCall(hosted, data.get("input")))
    return tuple(calls)


def parse_block(data: JsonValue) -> ContentPart:
    """Map one response content block; blocks of other types become `RawPart`s."""
    block = as_object(data, "a content block")
    kind = block.get("type")
    if kind == "text":
        return TextPart(_str(block, "text"))
    if kind == "tool_use":
        if "input" not in block:
            raise WireError("tool_use block has no 'input'")
        return ToolUsePart(id=_str(block, "id"), name=_str(block, "name"), input=block["input"])
    if kind == "thinking":
        signature = block.get("signature")
        if signature is not None and not isinstance(signature, str):
            raise WireError("thinking block 'signature' is not a string")
        return ThinkingPart(_str(block, "thinking"), signature)
    if not isinstance(kind, str):
        raise WireError("content block has no string 'type'")
    # redacted_thinking, server_tool_use, web_search_tool_result, mcp_tool_use,
    # mcp_tool_result, ...: kept whole, because the API wants them back unchanged
    # on the next call.
    return RawPart(provider=PROVIDER, data=block)


def stop_reason(raw: JsonValue, content: Sequence[ContentPart]) -> StopReason:
    """Map the API's `stop_reason`; an unknown one is judged by whether tools were called."""
    if isinstance(raw, str) and raw in _STOP_REASONS:
        return _STOP_REASONS[raw]
    return "tool_use" if any(isinstance(part, ToolUsePart) for part in content) else "end_turn"


def parse_usage(usage: JsonObject) -> TokenUsage:
    """Map `usage`; `input_tokens` is the total, as `TokenUsage` defines it.

    Anthropic's own `input_tokens` leaves out cache reads and writes; they are
    added here so totals compare across providers (pricing reads the raw usage).
    """
    cache_read = _optional_count(usage, "cache_read_input_tokens")
    cache_creation = _optional_count(usage, "cache_creation_input_tokens")
    return TokenUsage(
        input_tokens=_count(usage, "input_tokens") + (cache_read or 0) + (cache_creation or 0),
        output_tokens=_count(usage, "output_tokens"),
        cache_read_tokens=cache_read,
        cache_creation_tokens=cache_creation,
    )


def as_object(value: object, what: str) -> JsonObject:
    """Return `value` as a JSON object, or raise `WireError` naming `what`."""
    if not isinstance(value, dict):
        raise WireError(f"{what} is not a JSON object")
    return cast(JsonObject, value)


def _list(obj: JsonObject, key: str) -> list[JsonValue]:
    value = obj.get(key)
    if not isinstance(value, list):
        raise WireError(f"{key!r} is not a list")
    return value


def _str(obj: JsonObject, key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise WireError(f"{key!r} is not a string")
    return value


def _int(obj: JsonObject, key: str) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise WireError(f"{key!r} is not an integer")
    return value


def _count(obj: JsonObject, key: str) -> int:
    # A negative count would take tokens off the turn's totals, past its limits.
    value = _int(obj, key)
    if value < 0:
        raise WireError(f"{key!r} is not a count: {value} is below zero")
    return value


def _optional_count(obj: JsonObject, key: str) -> int | None:
    return None if obj.get(key) is None else _count(obj, key)
