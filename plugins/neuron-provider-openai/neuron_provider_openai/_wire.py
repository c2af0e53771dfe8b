"""Pure mapping between `neuron_turn` provider types and Chat Completions JSON (no I/O).

Request side: `request_body`. Response side: `parse_completion`. Both are
plain functions so the provider, the streaming accumulator, the tests and
the benchmark share them.

Strict tools (`ToolSchema.strict`): `strict_forms` writes each strict tool's
input schema in OpenAI's strict subset once per request; the body sends it
with `strict: true` (`tool_to_wire`), and `restore_calls` reads the answer's
calls of those tools back into the input the tool expects.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from pydantic import JsonValue

from layer0 import Base64Source
from neuron_tool.errors import StrictSchemaError
from neuron_tool.schema import ToolSchema
from neuron_tool.strict import StrictForm, strict_form
from neuron_turn.loop.hosted_tools import HostedToolCall
from neuron_turn.loop.output import OutputSchema
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
from neuron_turn.loop.sampling import SAMPLING_SETTINGS, Sampling
from neuron_turn.loop.thinking import THINKING_EFFORTS, Thinking
from neuron_turn.loop.tool_choice import ToolChoice
from neuron_turn.loop.tool_files import files_intro, made_file_note, unseen_file_note

from .presets import OPENAI_SAMPLING, PresetSampling, PresetThinking, ThinkingRule

logger = logging.getLogger("neuron_provider_openai")

SystemRole: TypeAlias = Literal["system", "developer", "user"]
"""The role the system prompt is sent under."""

Json: TypeAlias = dict[str, JsonValue]

StrictForms: TypeAlias = Mapping[str, StrictForm]
"""The strict form of each strict tool of one request, by tool name."""

ERROR_PREFIX: Final = "Error: "
"""Put before a failed tool result: the API has no `is_error` flag on tool messages."""

_REASONING_MODEL: Final = re.compile(r"(?:o[134]|gpt-5)(?:$|[-.:_])")
_NO_SYSTEM_MODEL: Final = re.compile(r"o1-(?:mini|preview)")
_STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


class UnsupportedContentError(ValueError):
    """A request holds what the API cannot take: a part in a message's role, a hosted tool."""


class MalformedCompletionError(ValueError):
    """A 200 body that is JSON but not a chat completion."""


# --- request ----------------------------------------------------------------


def is_reasoning_model(model: str) -> bool:
    """Whether `model` is one of OpenAI's reasoning families (o1, o3, o4, gpt-5), by name.

    A vendor prefix (`openai/o3` on OpenRouter) is ignored.
    """
    return _REASONING_MODEL.match(model.rsplit("/", 1)[-1].lower()) is not None


def default_system_role(model: str) -> SystemRole:
    """The system-prompt role for `model`, judged by its name.

    `o1-mini` / `o1-preview` accept neither `system` nor `developer` (a 400),
    so their prompt goes first as a `user` message. Reasoning models (`o1`,
    `o3`, `o4`, `gpt-5` families) take `developer`. Everything else, including
    every non-OpenAI model on a compatible server, takes `system`. A vendor
    prefix (`openai/o3` on OpenRouter) is ignored.
    """
    if _NO_SYSTEM_MODEL.match(model.rsplit("/", 1)[-1].lower()):
        return "user"
    return "developer" if is_reasoning_model(model) else "system"


def request_body(
    request: ProviderRequest,
    *,
    model: str,
    system_role: SystemRole,
    max_tokens_field: str = "max_completion_tokens",
    defaults: Mapping[str, JsonValue] | None = None,
    send_metadata: bool = False,
    reasoning_field: str | None = None,
    preset_thinking: PresetThinking | None = None,
    sampling_fields: PresetSampling | None = OPENAI_SAMPLING,
) -> Json:
    """Build the JSON body for `POST /chat/completions`.

    Precedence, lowest first: `defaults`, the fields built from the request,
    then `request.extra` (so a caller can override anything on one call).
    `extra["metadata"]` is the caller's trace metadata: it is sent as
    OpenAI's `metadata` field only when `send_metadata` is true.
    `reasoning_field` names the assistant-message field `ThinkingPart`s are
    sent back in (None: they are dropped). The tool choice and
    `parallel_tool_calls` go only with tools (the API refuses them alone);
    native output goes as `response_format` (`response_format_json`).
    `request.thinking` becomes `reasoning_effort`, or a vendor preset's own fields
    (`preset_thinking`, see `preset_thinking_fields`). `request.sampling` goes to the
    fields `sampling_fields` names (OpenAI's by default; a vendor preset's own, None for
    an API that documents none), see `sampling_json`. A strict tool goes in its strict
    form (`tool_to_wire`).

    Raises:
        UnsupportedContentError: a thinking setting the preset's model does not take, a
            sampling setting the API does not take, or a strict tool whose schema has no
            strict form.
    """
    body: Json = dict(defaults or {})
    body["model"] = model
    body["messages"] = build_messages(
        request, system_role=system_role, reasoning_field=reasoning_field
    )
    if request.tools:
        body["tools"] = [tool_to_wire(tool) for tool in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = tool_choice_to_wire(request.tool_choice)
        if request.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.output is not None:
        body["response_format"] = response_format_json(request.output)
    if request.max_tokens is not None:
        body[max_tokens_field] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.thinking is not None and preset_thinking is not None:
        given = body.keys() | request.extra.keys()
        if given.isdisjoint(preset_thinking.own_fields):
            body.update(preset_thinking_fields(preset_thinking, request.thinking, model))
    elif request.thinking is not None and "reasoning_effort" not in body:
        body["reasoning_effort"] = reasoning_effort(request.thinking)
    if request.sampling is not None:
        add_sampling(body, request, sampling_fields)
    merge_extra(body, request.extra, send_metadata=send_metadata)
    return body


def sampling_json(sampling: Sampling, fields: PresetSampling | None) -> Json:
    """The body fields for the settings `sampling` sets, named as `fields` says.

    Stop sequences go as a list. A setting is never left out: one the API does not
    take raises (a turn refuses it when made; this catches a request built by hand).

    Raises:
        UnsupportedContentError: a set setting `fields` does not take, naming it.
    """
    takes = fields.takes if fields is not None else frozenset()
    missing = sampling.names - takes
    if missing:
        listed = ", ".join(name for name in SAMPLING_SETTINGS if name in missing)
        where = f" (see {fields.source})" if fields is not None else ""
        raise UnsupportedContentError(
            f"the API takes no sampling setting {listed}{where}; leave it unset, "
            "or set the API's own field in extra"
        )
    if fields is None:
        return {}
    return sampling.as_fields({name: fields.field(name) for name in fields.takes})


def add_sampling(body: Json, request: ProviderRequest, fields: PresetSampling | None) -> None:
    """Put `request.sampling`'s fields in `body`, but for those already set.

    A field in `body` (the provider's `body_defaults`) or `request.extra` is the API's
    own, and wins.
    """
    if request.sampling is None:
        return
    for key, value in sampling_json(request.sampling, fields).items():
        if key not in body and key not in request.extra:
            body[key] = value


def reasoning_effort(thinking: Thinking) -> str:
    """OpenAI's `reasoning_effort` for a unified thinking setting (`False`: `"none"`)."""
    if thinking is True:
        return "medium"
    return "none" if thinking is False else thinking


def preset_rule(thinking: PresetThinking, model: str) -> ThinkingRule | None:
    """The first of the preset's rules whose `models` pattern is in `model` (None: none is)."""
    name = model.lower()
    for rule in thinking.rules:
        if rule.models is None or re.search(rule.models, name):
            return rule
    return None


def preset_thinking_fields(preset: PresetThinking, thinking: Thinking, model: str) -> Json:
    """The body fields a vendor preset takes for a thinking setting on `model`.

    The rule for the model (`preset_rule`) gives the shape and the value of each
    level (`ThinkingRule`); a level the API lacks is the nearest it has, set there.

    Raises:
        UnsupportedContentError: the model takes no setting, or cannot stop thinking and
            `thinking` is False; the message names the API's own field to use instead.
    """
    rule = preset_rule(preset, model)
    if rule is None or rule.shape is None:
        why = rule.note if rule is not None and rule.note else "no documented field"
        raise UnsupportedContentError(
            f"{model} takes no thinking setting ({why}); leave it unset, "
            f"or set the API's own field in extra (see {preset.source})"
        )
    if thinking is False and rule.off is None:
        raise UnsupportedContentError(
            f"{model} cannot stop thinking ({rule.note}); leave thinking unset or "
            f"choose an effort (see {preset.source})"
        )
    on = thinking is not False
    effort: str | None
    if isinstance(thinking, bool):
        effort = rule.on if on else rule.off
    else:
        effort = rule.efforts[THINKING_EFFORTS.index(thinking)] if rule.efforts else None
    shape = rule.shape
    if shape == "reasoning_effort":
        return {} if effort is None else {"reasoning_effort": effort}
    if shape == "openrouter":
        setting: Json = {"effort": effort} if effort is not None else {"enabled": True}
        return {"reasoning": setting}
    if shape == "deepseek":
        fields: Json = {"thinking": {"type": "enabled" if on else "disabled"}}
        if on and effort is not None:
            fields["reasoning_effort"] = effort
        return fields
    if shape == "reasoning_enabled":
        return {"reasoning": {"enabled": on}}
    return {"disable_reasoning": not on}


def merge_extra(body: Json, extra: Mapping[str, JsonValue], *, send_metadata: bool) -> None:
    """Put `request.extra` into `body` (last, so it overrides); `metadata` only if asked.

    `extra["metadata"]` is the caller's trace metadata, not necessarily meant
    for the API: OpenAI stores it with the answer, and other servers may reject it.
    """
    for key, value in extra.items():
        if key != "metadata" or send_metadata:
            body[key] = value


def tool_choice_to_wire(choice: ToolChoice) -> JsonValue:
    """`"auto"`, `"none"`, `"required"`, or `{"type": "function", "function": {"name": ...}}`."""
    if choice.name is None:
        return choice.mode
    return {"type": "function", "function": {"name": choice.name}}


def response_format_json(output: OutputSchema) -> Json:
    """`{"type": "json_schema", "json_schema": {name, description?, schema, strict?}}`.

    `description` and `strict` are sent only when set, as the API's optional fields.
    """
    spec: Json = {"name": output.name}
    if output.description:
        spec["description"] = output.description
    spec["schema"] = output.schema
    if output.strict:
        spec["strict"] = True
    return {"type": "json_schema", "json_schema": spec}


def tool_to_wire(tool: ToolSchema) -> Json:
    """One tool as a Chat Completions `function` tool; a strict one with `strict: true`.

    A strict tool (`strict=True`) sends its strict form (`tool_strict_form`). Any
    other tool goes without a `strict` key, the form every compatible server reads.

    Raises:
        UnsupportedContentError: a strict tool whose schema has no strict form.
    """
    if tool.strict is not True:
        function: Json = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        }
        return {"type": "function", "function": function}
    strict = tool_strict_form(tool)
    function = {
        "name": tool.name,
        "description": tool.description,
        "parameters": strict.schema,
        "strict": True,
    }
    return {"type": "function", "function": function}


def strict_forms(tools: Iterable[ToolSchema]) -> dict[str, StrictForm]:
    """The strict form of each strict tool among `tools`, by name (empty: none is strict).

    Raises:
        UnsupportedContentError: a strict tool's schema has no strict form; the message
            names the tool, where in its schema and why.
    """
    return {tool.name: tool_strict_form(tool) for tool in tools if tool.strict is True}


def tool_strict_form(tool: ToolSchema) -> StrictForm:
    """`tool`'s input schema in OpenAI's strict subset (`neuron_tool.strict_form`).

    Raises:
        UnsupportedContentError: the schema has no strict form (`StrictSchemaError`'s
            message: the tool, the JSON path and why).
    """
    try:
        return strict_form(tool.input_schema, tool=tool.name)
    except StrictSchemaError as exc:
        raise UnsupportedContentError(str(exc)) from exc


def restore_calls(content: Sequence[ContentPart], forms: StrictForms) -> list[ContentPart]:
    """`content` with each call of a strict tool in `forms` restored (`StrictForm.restore`).

    Strict mode makes the model send every optional property, as null when it has
    none; dropping those nulls gives the tool the input it would have got without
    strict mode, so its defaults apply. Other parts are kept as they are.
    """
    return [_restored(part, forms) for part in content]


def _restored(part: ContentPart, forms: StrictForms) -> ContentPart:
    if not isinstance(part, ToolUsePart):
        return part
    form = forms.get(part.name)
    if form is None:
        return part
    return ToolUsePart(part.id, part.name, form.restore(part.input))


def build_messages(
    request: ProviderRequest, *, system_role: SystemRole, reasoning_field: str | None = None
) -> list[JsonValue]:
    """The `messages` array: the system prompt first, then each message mapped."""
    messages: list[JsonValue] = []
    if request.system:
        messages.append({"role": system_role, "content": request.system})
    calls: ProviderMessage | None = None
    for message in request.messages:
        messages.extend(
            message_to_wire(
                message, system_role=system_role, reasoning_field=reasoning_field, calls=calls
            )
        )
        calls = message
    return messages


def message_to_wire(
    message: ProviderMessage,
    *,
    system_role: SystemRole,
    reasoning_field: str | None = None,
    calls: ProviderMessage | None = None,
) -> list[Json]:
    """One message as one or more wire messages (tool results each become their own).

    `calls`: the message before it, whose tool calls its results answer; it names
    the tool a result's files came from.
    """
    if message.role == "assistant":
        return [_assistant_message(message.content, reasoning_field)]
    if message.role == "system":
        return [{"role": system_role, "content": _system_text(message.content)}]
    return _user_messages(message.content, calls)


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


def _user_messages(parts: Sequence[ContentPart], calls: ProviderMessage | None) -> list[Json]:
    """Tool results first (they must follow the assistant's tool calls), then the rest.

    The loop sends a round's tool results as one user message, possibly with
    text after them; the API wants each result as a `tool` message directly
    after the assistant message that asked for it, so they lead. A `tool`
    message holds only text, so the files the results returned open the user
    message after them, each result's introduced by the call it came from.
    """
    tool_messages: list[Json] = []
    shown: list[JsonValue] = []
    content: list[JsonValue] = []
    for part in parts:
        if isinstance(part, ToolResultPart):
            tool_messages.append(tool_result_to_wire(part))
            if part.files:
                shown.extend(_tool_files(part, _tool_name(calls, part.tool_use_id)))
        elif isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append(image_to_wire(part))
        elif isinstance(part, DocumentPart):
            content.append(file_to_wire(part))
        elif isinstance(part, ToolUsePart):
            raise UnsupportedContentError("a user message cannot hold a tool call")
        # ThinkingPart / RawPart come from other providers and mean nothing here.
    content = [*shown, *content]
    if not content and tool_messages:
        return tool_messages
    return [*tool_messages, {"role": "user", "content": _user_content(content)}]


def _user_content(content: list[JsonValue]) -> JsonValue:
    # A lone text goes as a plain string: every compatible server reads that form.
    if len(content) == 1:
        only = content[0]
        if isinstance(only, dict) and only.get("type") == "text":
            return only["text"]
    if not content:
        return ""
    return content


def tool_result_to_wire(part: ToolResultPart) -> Json:
    """A tool result as a `tool` message; a failed one is prefixed with `Error: `."""
    content = f"{ERROR_PREFIX}{part.content}" if part.is_error else part.content
    return {"role": "tool", "tool_call_id": part.tool_use_id, "content": content}


def _tool_name(calls: ProviderMessage | None, call_id: str) -> str | None:
    """The name of the tool `call_id` called, looked up only for a result with files."""
    if calls is None:
        return None
    for part in calls.content:
        if isinstance(part, ToolUsePart) and part.id == call_id:
            return part.name
    return None


def _tool_files(result: ToolResultPart, tool_name: str | None) -> list[JsonValue]:
    """The content parts showing a result's files: an intro naming the call, then each file."""
    intro: JsonValue = {"type": "text", "text": files_intro(result, tool_name)}
    return [intro, *(_tool_file(file) for file in result.files)]


def _tool_file(file: ImagePart | DocumentPart) -> Json:
    """A file a tool returned as a content part; a document by URL as a note in its place.

    A tool's file is not the caller's request, so what the API cannot take
    does not fail the call: the model is told it is not shown instead.
    """
    if isinstance(file, ImagePart):
        return image_to_wire(file)
    try:
        return file_to_wire(file)
    except UnsupportedContentError as exc:
        media = file.media_type.partition("/")[0] in ("audio", "video")
        why = str(exc) if media else "Chat Completions take a document's bytes, not its URL"
        return {"type": "text", "text": unseen_file_note(file, why)}


def image_to_wire(part: ImagePart) -> Json:
    """An image as an `image_url` content part (inline bytes as a `data:` URL)."""
    return {"type": "image_url", "image_url": {"url": image_url(part)}}


def image_url(part: ImagePart) -> str:
    """The image's URL, or its bytes as a `data:` URL."""
    source = part.source
    return data_url(part.media_type, source) if isinstance(source, Base64Source) else source.url


AUDIO_FORMATS: Final = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
"""The audio Chat Completions take (`input_audio`'s formats), by media type."""


def file_to_wire(part: DocumentPart) -> Json:
    """A file that is not an image: audio as `input_audio`, a document as a `file` part.

    Raises:
        UnsupportedContentError: video, audio of another format than WAV or MP3 or by
            URL, or a document by URL: the API takes none of them.
    """
    kind = part.media_type.partition("/")[0]
    if kind == "video":
        raise UnsupportedContentError(
            f"video ({document_name(part)}, {part.media_type}): Chat Completions take no "
            "video; Gemini reads it"
        )
    if kind == "audio":
        return audio_to_wire(part)
    return document_to_wire(part)


def audio_to_wire(part: DocumentPart) -> Json:
    """Audio as an `input_audio` part: WAV or MP3 bytes, for an audio model.

    Raises:
        UnsupportedContentError: another format, or audio by URL.
    """
    audio_format = AUDIO_FORMATS.get(part.media_type)
    if audio_format is None or not isinstance(part.source, Base64Source):
        given = f"{part.media_type} by URL" if audio_format else part.media_type
        raise UnsupportedContentError(
            f"audio ({document_name(part)}, {given}): Chat Completions take WAV or MP3 "
            "audio by its bytes"
        )
    return {
        "type": "input_audio",
        "input_audio": {"data": part.source.data, "format": audio_format},
    }


def document_to_wire(part: DocumentPart) -> Json:
    """A document as a `file` content part, its bytes as a `data:` URL.

    Raises:
        UnsupportedContentError: a document by URL (the API takes a file's bytes or an
            uploaded file's id, not a URL).
    """
    source = part.source
    if not isinstance(source, Base64Source):
        raise UnsupportedContentError(
            "a document by URL: Chat Completions take a document's bytes; send its data instead"
        )
    file: Json = {"filename": document_name(part), "file_data": data_url(part.media_type, source)}
    return {"type": "file", "file": file}


_EXTENSIONS: Final = {
    "application/pdf": ".pdf",
    "text/plain": ".txt",
    "audio/wav": ".wav",
    "audio/mpeg": ".mp3",
}


def document_name(part: DocumentPart) -> str:
    """The document's file name, or `document.pdf` (by its media type) when it has none."""
    return part.name or f"document{_EXTENSIONS.get(part.media_type, '')}"


def data_url(media_type: str, source: Base64Source) -> str:
    """Inline bytes as a `data:` URL, the form both APIs take for images and files."""
    return f"data:{media_type};base64,{source.data}"


def _assistant_message(parts: Sequence[ContentPart], reasoning_field: str | None) -> Json:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[JsonValue] = []
    for part in parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ThinkingPart):
            thoughts.append(part.thinking)
        elif isinstance(part, ToolUsePart):
            calls.append(tool_call_to_wire(part))
        elif isinstance(part, ImagePart | DocumentPart):
            # A file another model made (ImageGeneration): the API takes none from the assistant.
            texts.append(made_file_note(part))
        elif isinstance(part, ToolResultPart):
            raise UnsupportedContentError(f"an assistant message cannot hold {part_kind(part)}")
    text = "\n".join(texts)
    message: Json = {"role": "assistant", "content": text if text or not calls else None}
    if reasoning_field and thoughts:
        message[reasoning_field] = "".join(thoughts)
    if calls:
        message["tool_calls"] = calls
    return message


def tool_call_to_wire(part: ToolUsePart) -> Json:
    """A tool call as the API wrote it: `arguments` is a JSON *string*.

    An input kept as a raw string (the model's arguments were not valid JSON)
    goes back unchanged, so the history shows the model what it really sent.
    """
    function: Json = {"name": part.name, "arguments": arguments_text(part)}
    return {"id": part.id, "type": "function", "function": function}


def arguments_text(part: ToolUsePart) -> str:
    """A call's input as the JSON string both APIs take; a raw-string input goes unchanged."""
    return part.input if isinstance(part.input, str) else json.dumps(part.input)


def part_kind(part: ContentPart) -> str:
    """What `part` is, in words, for an error message (`an image`)."""
    return {
        ImagePart: "an image",
        DocumentPart: "a document",
        ToolResultPart: "a tool result",
        ToolUsePart: "a tool call",
    }.get(type(part), type(part).__name__)


# --- response ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Completion:
    """A chat completion read into provider types (cost is the provider's business)."""

    content: list[ContentPart]
    stop_reason: StopReason
    usage: TokenUsage
    model: str
    hosted_calls: tuple[HostedToolCall, ...] = ()
    """The built-in tools' calls the API ran for the answer (the Responses API's)."""
    audio_tokens: tuple[int, int] | None = None
    """The audio tokens among the input and output tokens, when the usage counts any:
    audio models price them apart."""
    web_searches: int = 0
    """The hosted web searches the API ran for the answer, each billed apart (the Responses
    API's `web_search_call` items; Chat Completions never set it)."""


def parse_completion(data: object, *, fallback_model: str) -> Completion:
    """Read a chat completion body (already JSON-decoded).

    Raises:
        MalformedCompletionError: `data` has no `choices[0].message` object.
    """
    if not isinstance(data, dict):
        raise MalformedCompletionError("the body is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedCompletionError("the body has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedCompletionError("choices[0] has no message")
    content = parse_message(message)
    model = data.get("model")
    return Completion(
        content=content,
        stop_reason=stop_reason(choice.get("finish_reason"), content),
        usage=parse_usage(data.get("usage")),
        audio_tokens=audio_tokens(data.get("usage")),
        model=model if isinstance(model, str) and model else fallback_model,
    )


def parse_message(message: Mapping[str, object]) -> list[ContentPart]:
    """The assistant message's parts: reasoning, text (or refusal), then tool calls.

    `reasoning_content` (vLLM, DeepSeek, llama.cpp, Fireworks) and `reasoning`
    (Ollama, Groq, OpenRouter, Together, Cerebras) are not OpenAI fields, but when
    present they are the model's visible reasoning and become a `ThinkingPart`;
    so do Mistral's `thinking` content chunks.
    """
    parts: list[ContentPart] = []
    for key in ("reasoning_content", "reasoning"):
        reasoning = message.get(key)
        if isinstance(reasoning, str) and reasoning:
            parts.append(ThinkingPart(reasoning))
            break
    else:
        thought = thinking_of(message.get("content"))
        if thought:
            parts.append(ThinkingPart(thought))
    text = text_of(message.get("content"))
    refusal = message.get("refusal")
    if text:
        parts.append(TextPart(text))
    elif isinstance(refusal, str) and refusal:
        parts.append(TextPart(refusal))
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        parts.extend(parse_tool_call(call) for call in calls if isinstance(call, dict))
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        parts.append(parse_tool_call({"function": legacy}))
    return parts


def text_of(content: object) -> str:
    """A message's text: the string, or its content parts' `text` joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some servers answer with content parts
        return "".join(
            item["text"]
            for item in content
            if isinstance(item, dict) and isinstance(item.get("text"), str)
        )
    return ""


def thinking_of(content: object) -> str:
    """The text of Mistral's `thinking` chunks in a content list (`""` for anything else).

    A chunk is `{"type": "thinking", "thinking": [{"type": "text", "text": ...}]}`
    (https://docs.mistral.ai/capabilities/reasoning/adjustable).
    """
    if not isinstance(content, list):
        return ""
    return "".join(
        text_of(item.get("thinking"))
        for item in content
        if isinstance(item, dict) and item.get("type") == "thinking"
    )


def parse_tool_call(call: Mapping[str, object]) -> ToolUsePart:
    """One `tool_calls` entry; the arguments JSON string is decoded here.

    Arguments that are not valid JSON do not raise: the input is the raw
    string. A tool's input schema is an object, so the tool registry rejects
    it (`'{"city": "Par' is not of type 'object'`) and the loop hands the model
    an error result it can correct, instead of the whole turn failing.
    An empty string means no arguments (`{}`), as some servers send it.
    """
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    name = function.get("name")
    call_id = call.get("id")
    return ToolUsePart(
        id=call_id if isinstance(call_id, str) and call_id else f"call_{uuid.uuid4().hex[:24]}",
        name=name if isinstance(name, str) else "",
        input=parse_arguments(function.get("arguments"), name),
    )


def parse_arguments(raw: object, name: object) -> JsonValue:
    """A tool call's arguments: the decoded JSON, or the raw text when it is not JSON.

    See `parse_tool_call` for why invalid JSON does not raise.
    """
    if isinstance(raw, dict):  # some compatible servers send an object, not a string
        return raw
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        value: JsonValue = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested past what Python parses
        logger.warning("tool call %r: arguments are not valid JSON; passing the raw text", name)
        return raw
    # A string input always means "the raw arguments text", even for a JSON string literal.
    return raw if isinstance(value, str) else value


def stop_reason(finish_reason: object, content: Sequence[ContentPart]) -> StopReason:
    """Map `finish_reason`; tool calls always mean `tool_use`.

    Some compatible servers say `stop` (or nothing) next to tool calls; the
    loop must still run them, so any tool call wins over `stop`.
    """
    has_calls = any(isinstance(part, ToolUsePart) for part in content)
    mapped = _STOP_REASONS.get(finish_reason) if isinstance(finish_reason, str) else None
    if has_calls and mapped in (None, "end_turn"):
        return "tool_use"
    return mapped or "end_turn"


def parse_usage(usage: object) -> TokenUsage:
    """Read `usage`; `prompt_tokens` includes the cached ones, reported as cache reads.

    `input_tokens` is OpenAI's `prompt_tokens` unchanged (cached and
    cache-written tokens included); `cache_read_tokens` is
    `prompt_tokens_details.cached_tokens` and `cache_creation_tokens` is
    `prompt_tokens_details.cache_write_tokens`, each None when not reported
    (older models and most compatible servers report no cache writes).
    """
    if not isinstance(usage, dict):
        return TokenUsage()
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    return TokenUsage(
        input_tokens=token_count(usage.get("prompt_tokens")),
        output_tokens=token_count(usage.get("completion_tokens")),
        cache_read_tokens=optional_token_count(details.get("cached_tokens")),
        cache_creation_tokens=optional_token_count(details.get("cache_write_tokens")),
    )


def audio_tokens(usage: object) -> tuple[int, int] | None:
    """The audio tokens `usage` counts in and out (`*_tokens_details.audio_tokens`), or None."""
    if not isinstance(usage, dict):
        return None
    counts = []
    for key in ("prompt_tokens_details", "completion_tokens_details"):
        details = usage.get(key)
        counts.append(token_count(details.get("audio_tokens")) if isinstance(details, dict) else 0)
    return (counts[0], counts[1]) if any(counts) else None


def optional_token_count(value: object) -> int | None:
    """A token count the API may leave out (None), read as `token_count`."""
    return None if value is None else token_count(value)


def token_count(value: object) -> int:
    """A token count; anything but a positive int (a bool, a string, a negative) is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
