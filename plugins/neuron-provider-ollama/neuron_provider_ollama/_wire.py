"""Pure mapping between `neuron_turn` requests/responses and Ollama's `/api/chat` JSON.

Request: `request.system` becomes a leading `system` message; text parts of
one message are joined by newlines into `content`; images go to `images`
(base64 only); tool calls to `tool_calls` with object `arguments`; thinking
to `thinking`; each tool result becomes its own `tool` message carrying the
tool's name (Ollama pairs results with calls by name and order, not by id),
its content prefixed with `Error: ` when it failed. The files results
returned follow all of them in one user message (a tool message takes only
text): an intro per result naming its call, the images in `images`, and a
note in place of each file Ollama cannot take. `max_tokens`,
`temperature` and the sampling setting go to `options` (`top_p`, `top_k`,
`stop`, `seed`, `presence_penalty`, `frequency_penalty`); `request.extra` is
merged into the body, `extra["options"]` into `options` (so its fields
win). `extra["metadata"]` (the caller's trace ids) is not sent: Ollama has no
field for it.

Tool choice: Ollama has no `tool_choice`. `none` sends no tools; a named tool
sends only that tool; both forced choices (`required`, a named tool) add a
line to the system prompt asking for the call, which the model may ignore.
Native output goes as `format: <JSON Schema>`, only on a call that sends no
tools: Ollama's schema grammar leaves the model no way to call a tool (the
loop's correction of a free-text answer is sent with `tool_choice: none`).

Response: `message.thinking` → ThinkingPart, `message.content` → TextPart,
`message.tool_calls` → ToolUseParts (ids per `_tool_ids`), `done_reason` →
stop reason, `prompt_eval_count` / `eval_count` → usage.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final
from urllib.parse import urlsplit

from pydantic import JsonValue

from neuron_tool.schema import ToolSchema
from neuron_turn.loop.documents import file_kind
from neuron_turn.loop.http_errors import body_prefix
from neuron_turn.loop.provider import (
    ContentPart,
    DocumentPart,
    ImagePart,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    RawPart,
    StopReason,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import InvalidRequestError, ProviderResponseError
from neuron_turn.loop.sampling import PLAIN_FIELDS
from neuron_turn.loop.special_tokens import defused
from neuron_turn.loop.thinking import Thinking
from neuron_turn.loop.tool_files import files_intro, made_files_as_notes, unseen_file_note

from ._errors import PROVIDER
from ._tool_ids import synthesise_tool_call_id

__all__ = [
    "SAMPLING_OPTIONS",
    "build_chat_body",
    "parse_chat_response",
    "stream_requested",
]

_RESERVED_EXTRA: Final = frozenset({"model", "messages"})
_NOT_SENT_EXTRA: Final = frozenset({"metadata", "options", "stream"})

JsonObject = dict[str, JsonValue]


def stream_requested(request: ProviderRequest, *, default: bool) -> bool:
    """Return whether this call streams: `extra["stream"]` if given, else `default`."""
    value = request.extra.get("stream", default)
    if not isinstance(value, bool):
        raise InvalidRequestError(
            f"request.extra['stream'] must be true or false, not {value!r}", provider=PROVIDER
        )
    return value


def build_chat_body(request: ProviderRequest, *, model: str, stream: bool) -> JsonObject:
    """Return the `/api/chat` body for `request`, asking `model`.

    Raises:
        InvalidRequestError: an image is given by URL, or `extra` is malformed.
    """
    reserved = _RESERVED_EXTRA.intersection(request.extra)
    if reserved:
        raise InvalidRequestError(
            f"request.extra may not set {sorted(reserved)}: they come from the request itself",
            provider=PROVIDER,
        )
    request = _apply_tool_choice(request)
    body: JsonObject = {"model": model, "messages": _messages(request), "stream": stream}
    if request.tools:
        body["tools"] = [_tool(tool) for tool in request.tools]
    elif request.output is not None:
        body["format"] = request.output.schema
    options = _options(request)
    if options:
        body["options"] = options
    if request.thinking is not None:
        body["think"] = think_json(request.thinking, model)
    body.update((k, v) for k, v in request.extra.items() if k not in _NOT_SENT_EXTRA)
    return body


def think_json(thinking: Thinking, model: str) -> JsonValue:
    """The body's `think` for a unified thinking setting.

    Ollama takes true or false; gpt-oss models take an effort (`"low"`,
    `"medium"`, `"high"`) instead, the nearest one given.
    """
    if isinstance(thinking, bool):
        return thinking
    if model.startswith("gpt-oss"):
        return _GPT_OSS_EFFORTS[thinking]
    return True


_GPT_OSS_EFFORTS: Final[Mapping[str, str]] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}


def _apply_tool_choice(request: ProviderRequest) -> ProviderRequest:
    """Express the tool choice with what Ollama has: the tools sent and the prompt."""
    choice = request.tool_choice
    if choice is None or choice.mode == "auto" or not request.tools:
        return request
    if choice.mode == "none":
        return replace(request, tools=[])
    if choice.name is not None:
        tools = [tool for tool in request.tools if tool.name == choice.name]
        ask = f"Call the tool {choice.name} now."
    else:
        tools = list(request.tools)
        ask = "Call one of the tools now."
    system = f"{request.system}\n{ask}" if request.system else ask
    return replace(request, tools=tools, system=system)


def _options(request: ProviderRequest) -> JsonObject:
    options: JsonObject = {}
    if request.max_tokens is not None:
        options["num_predict"] = request.max_tokens
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.sampling is not None:
        options.update(request.sampling.as_fields(SAMPLING_OPTIONS))
    extra_options = request.extra.get("options")
    if extra_options is not None:
        if not isinstance(extra_options, dict):
            raise InvalidRequestError(
                f"request.extra['options'] must be an object, not {extra_options!r}",
                provider=PROVIDER,
            )
        options.update(extra_options)
    return options


SAMPLING_OPTIONS: Final = PLAIN_FIELDS
"""Every sampling setting, by its `options` field (Ollama's Modelfile parameter names)."""


def _tool(tool: ToolSchema) -> JsonObject:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        },
    }


# --- messages ---------------------------------------------------------------


@dataclass(slots=True)
class _WireMessage:
    """One Ollama message being assembled from consecutive content parts."""

    role: str
    texts: list[str] = field(default_factory=list)
    images: list[JsonValue] = field(default_factory=list)
    tool_calls: list[JsonValue] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    raw: JsonObject = field(default_factory=dict)

    def to_json(self) -> JsonObject:
        message: JsonObject = {"role": self.role, "content": "\n".join(self.texts)}
        if self.thinking:
            message["thinking"] = "\n".join(self.thinking)
        if self.images:
            message["images"] = self.images
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        message.update(self.raw)
        return message


def _messages(request: ProviderRequest) -> list[JsonValue]:
    tool_names = _tool_names_by_id(request.messages)
    wire: list[JsonValue] = []
    if request.system:
        wire.append({"role": "system", "content": request.system})
    # A file a model made goes as a note: Ollama's chat templates show no image from the
    # assistant, and its API takes no document at all.
    # Ollama reads special tokens in the prompt its template renders: see special_tokens.
    for message in defused(made_files_as_notes(request.messages)):
        wire.extend(_message(message, tool_names))
    return wire


def _tool_names_by_id(messages: Sequence[ProviderMessage]) -> dict[str, str]:
    return {
        part.id: part.name
        for message in messages
        for part in message.content
        if isinstance(part, ToolUsePart)
    }


def _message(message: ProviderMessage, tool_names: Mapping[str, str]) -> list[JsonObject]:
    """Return the Ollama messages for one message: tool results split out, in order.

    The results' files come after the last tool message, ahead of the parts
    that follow it (the user's own text and images), in one message.
    """
    wire: list[JsonObject] = []
    current: _WireMessage | None = None
    shown: _WireMessage | None = None  # made only for a result with files
    for part in message.content:
        if isinstance(part, ToolResultPart):
            if current is not None:
                wire.append(current.to_json())
                current = None
            wire.append(_tool_result(part, tool_names))
            if part.files:
                shown = shown or _WireMessage(message.role)
                _add_tool_files(shown, part, tool_names.get(part.tool_use_id))
            continue
        if current is None:
            current = _WireMessage(message.role)
        _add_part(current, part)
    if shown is not None:
        if current is None:
            current = shown
        else:
            current.texts[:0] = shown.texts
            current.images[:0] = shown.images
    if current is not None or not wire:
        wire.append((current or _WireMessage(message.role)).to_json())
    return wire


def _add_part(message: _WireMessage, part: ContentPart) -> None:
    if isinstance(part, TextPart):
        message.texts.append(part.text)
    elif isinstance(part, ImagePart):
        message.images.append(_image_base64(part))
    elif isinstance(part, DocumentPart):
        # Dropping it would answer a question about a file the model never saw.
        raise InvalidRequestError(_refused_file(part), provider=PROVIDER)
    elif isinstance(part, ToolUsePart):
        message.tool_calls.append({"function": {"name": part.name, "arguments": part.input}})
    elif isinstance(part, ThinkingPart):
        message.thinking.append(part.thinking)
    elif isinstance(part, RawPart):
        # Another provider's opaque block means nothing to Ollama: drop it.
        if part.provider == PROVIDER and isinstance(part.data, dict):
            message.raw.update(part.data)


_READERS: Final = {
    "document": "pass its text as a message, or use a provider that reads documents "
    "(anthropic, openai, google)",
    "audio": "use a provider that hears audio (google, or openai with an audio model)",
    "video": "use a provider that watches video (google)",
}


def _refused_file(part: DocumentPart) -> str:
    kind = file_kind(part.media_type)
    what = "documents" if kind == "document" else kind
    return f"Ollama's chat API takes no {what} ({part.name or part.media_type}); {_READERS[kind]}"


def _add_tool_files(message: _WireMessage, result: ToolResultPart, tool_name: str | None) -> None:
    """Add a result's files: an intro naming the call, the images, a note for each unseen file.

    A tool's file is not the caller's request, so what Ollama cannot take
    does not fail the call: the model is told it is not shown instead.
    """
    message.texts.append(files_intro(result, tool_name))
    for file in result.files:
        if isinstance(file, DocumentPart):
            message.texts.append(unseen_file_note(file, "Ollama's chat API takes no documents"))
            continue
        image = _tool_image(file)
        if image is None:
            why = "Ollama takes images only as base64 data, not by URL"
            message.texts.append(unseen_file_note(file, why))
        else:
            message.images.append(image)


def _tool_image(part: ImagePart) -> str | None:
    """The base64 of a tool's image, or None when it is given by a URL Ollama cannot fetch."""
    try:
        return _image_base64(part)
    except InvalidRequestError:
        return None


def _tool_result(part: ToolResultPart, tool_names: Mapping[str, str]) -> JsonObject:
    content = f"Error: {part.content}" if part.is_error else part.content
    result: JsonObject = {"role": "tool", "content": content}
    name = tool_names.get(part.tool_use_id)
    if name is not None:
        result["tool_name"] = name
    return result


def _image_base64(part: ImagePart) -> str:
    source = part.source
    if source.type == "base64":
        return _strip_data_url(source.data) if source.data.startswith("data:") else source.data
    if source.url.startswith("data:"):  # inline already: no fetching needed
        return _strip_data_url(source.url)
    split = urlsplit(source.url)
    shown = f"{split.scheme}://{split.netloc}{split.path}"[:120]  # no query: it may hold a token
    raise InvalidRequestError(
        f"Ollama accepts images only as base64, not by URL ({shown}); this provider does not "
        "download images itself (no network beyond the model call): fetch the image and pass "
        "it as a base64 source",
        provider=PROVIDER,
    )


def _strip_data_url(data: str) -> str:
    header, _, payload = data.partition(",")
    if not header.endswith(";base64"):
        raise InvalidRequestError(
            "a data: URL image must be base64-encoded (data:<type>;base64,...)", provider=PROVIDER
        )
    return payload


# --- response ---------------------------------------------------------------


def parse_chat_response(
    data: object, *, requested_model: str, fallback_salt: str
) -> ProviderResponse:
    """Return the response in a decoded `/api/chat` body (cost left unset).

    Raises:
        ProviderResponseError: the body is not the documented shape.
    """
    if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
        raise _shape_error("no 'message' object", data)
    message: dict[str, Any] = data["message"]
    content: list[ContentPart] = []
    thinking = message.get("thinking")
    if isinstance(thinking, str) and thinking:
        content.append(ThinkingPart(thinking))
    text = message.get("content")
    if isinstance(text, str) and text:
        content.append(TextPart(text))
    created_at = data.get("created_at")
    salt = created_at if isinstance(created_at, str) and created_at else fallback_salt
    calls = _tool_calls(message.get("tool_calls"), salt=salt, data=data)
    content.extend(calls)
    model = data.get("model")
    return ProviderResponse(
        content=content,
        stop_reason=_stop_reason(data.get("done_reason"), has_tool_calls=bool(calls)),
        usage=TokenUsage(
            input_tokens=_count(data.get("prompt_eval_count")),
            output_tokens=_count(data.get("eval_count")),
        ),
        model=model if isinstance(model, str) and model else requested_model,
    )


def _tool_calls(raw: object, *, salt: str, data: object) -> list[ToolUsePart]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _shape_error("'message.tool_calls' is not a list", data)
    return [_tool_call(call, position, salt=salt, data=data) for position, call in enumerate(raw)]


def _tool_call(call: object, position: int, *, salt: str, data: object) -> ToolUsePart:
    function = call.get("function") if isinstance(call, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(function, dict) or not isinstance(name, str) or not name:
        raise _shape_error(f"tool call {position} has no function name", data)
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):  # some proxies send OpenAI-style JSON strings
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):  # RecursionError: nested past what Python parses
            raise _shape_error(f"tool call {position} arguments are not JSON", data) from None
    given_id = call.get("id") if isinstance(call, dict) else None
    call_id = (
        given_id
        if isinstance(given_id, str) and given_id
        else synthesise_tool_call_id(salt=salt, position=position, name=name, arguments=arguments)
    )
    return ToolUsePart(id=call_id, name=name, input=arguments)


def _stop_reason(done_reason: object, *, has_tool_calls: bool) -> StopReason:
    if done_reason == "length":
        return "max_tokens"
    # Ollama says "stop" even when the model called tools; "load"/"unload"
    # answer an empty request and mean nothing was cut short.
    return "tool_use" if has_tool_calls else "end_turn"


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _shape_error(problem: str, data: object) -> ProviderResponseError:
    try:
        quoted = body_prefix(json.dumps(data, default=str))
    except RecursionError:  # parsed a little shallower than this deeper stack can write
        quoted = "(nested too deep to quote)"
    return ProviderResponseError(
        f"Ollama answered 200 with an unexpected body ({problem}): {quoted}", provider=PROVIDER
    )
