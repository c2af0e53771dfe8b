"""Request side: `neuron_turn` provider types to a Gemini `generateContent` body (no I/O).

Field names are the API's JSON (camelCase) from the v1beta reference:
`GenerateContentRequest` (`contents`, `systemInstruction`, `tools`,
`toolConfig`, `generationConfig`) and `Part` (`text`, `inlineData`,
`fileData`, `functionCall`, `functionResponse`, `thought`, `thoughtSignature`).
`ImageGeneration` is no `tools` entry: it asks for images beside the text
(`generationConfig.responseModalities` and `imageConfig`).

Thought signatures travel as this provider's `RawPart`s (see `_answer`): a
marker `{"thoughtSignature": ...}` right before the part it came on is put
back on that part, byte for byte; a `RawPart` holding a whole part (a signed
part the loop has no type for) is sent as it is, in its place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Final, TypeAlias

from pydantic import JsonValue

from layer0 import Base64Source
from neuron_tool.schema import ToolSchema
from neuron_turn.loop.hosted_tools import (
    CodeExecution,
    HostedTool,
    ImageGeneration,
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
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.sampling import Sampling, SamplingSetting
from neuron_turn.loop.thinking import Thinking
from neuron_turn.loop.tool_choice import ToolChoice
from neuron_turn.loop.tool_files import files_intro

Json: TypeAlias = dict[str, JsonValue]

PROVIDER: Final = "google"
"""The provider name; also the `RawPart.provider` of the thought signatures it sends back."""
SIGNATURE: Final = "thoughtSignature"
"""The part field holding a thought signature."""
UNSIGNED_CALL_SIGNATURE: Final = "context_engineering_is_the_way_to_go"
"""What Google documents for a function call no Gemini model signed (another provider's
call, one written by hand): Gemini 3 refuses the first call of a step without a signature."""
ONE_CALL_AT_A_TIME: Final = "Call at most one tool per answer."
"""Added to the system instruction for `parallel_tool_calls=False`: the API has no switch."""

_CHOICE_MODES: Final = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}
STRICT_MODE: Final = "VALIDATED"
"""The calling mode for `auto` when a tool is strict: text or a call, as `AUTO`, but a call
"ensures function schema adherence" (constrained decoding; `ANY` already does), and takes
`allowedFunctionNames` as `ANY` does. Google's function calling guide and REST reference:
https://ai.google.dev/gemini-api/docs/function-calling#function_calling_modes and
https://ai.google.dev/api/caching#FunctionCallingConfig."""
_STRICT_CHOICE_MODES: Final = {**_CHOICE_MODES, "auto": STRICT_MODE}
_NOT_SENT_EXTRA: Final = frozenset({"metadata"})
_MERGED_FIELDS: Final = frozenset({"generationConfig", "toolConfig"})


class UnsupportedContentError(ValueError):
    """A message holds a part the Gemini API cannot take, or cannot take there."""


# --- the body -----------------------------------------------------------------


def request_body(
    request: ProviderRequest,
    *,
    defaults: Mapping[str, JsonValue] | None = None,
    include_thoughts: bool = False,
    model: str = "",
) -> Json:
    """Build the JSON body for `POST models/{model}:generateContent` (the model is in the URL).

    `model` (the one in the URL) decides how a thinking setting is sent
    (`thinking_config`).

    Precedence, lowest first: `defaults`, the fields built from the request,
    then `request.extra`. `generationConfig` and `toolConfig` are merged one
    level deep (so `extra={"generationConfig": {"topK": 40}}` keeps
    `maxOutputTokens`); other keys replace. `extra["metadata"]` (the caller's
    trace ids) is not sent: the API has no field for it. A `generationConfig`
    field of the provider's own (in `defaults` or `extra`) wins over the
    thinking, sampling and image settings (`responseModalities`, `imageConfig`,
    each whole). A strict tool sends `STRICT_MODE` for an
    `auto` tool choice, or for none unless `defaults` hold a
    `functionCallingConfig` (sent as it is, as without a strict tool).

    Raises:
        UnsupportedContentError: a message holds a part the API cannot take, a
            hosted tool sets a limit the API has no field for, or the sampling
            setting holds a value beyond the API's limits (see `sampling_config`).
    """
    body: Json = dict(defaults or {})
    system = system_instruction(request)
    if system is not None:
        body["systemInstruction"] = system
    body["contents"] = build_contents(request.messages)
    tools: list[JsonValue] = []
    images: ImageGeneration | None = None
    for hosted in request.hosted_tools:
        if isinstance(hosted, ImageGeneration):
            images = hosted
        else:
            tools.append(hosted_tool_entry(hosted))
    if request.tools:
        tools.insert(0, {"functionDeclarations": [declaration(tool) for tool in request.tools]})
    if tools:
        body["tools"] = tools
    if request.tools:
        choice = request.tool_choice
        if choice is not None:
            # Only `auto` maps otherwise for a strict tool, so the others skip the check.
            strict = choice.mode == "auto" and has_strict_tool(request.tools)
            _merge(body, "toolConfig", {"functionCallingConfig": calling_config(choice, strict)})
        elif has_strict_tool(request.tools) and not _has_calling_config(body):
            # With no tool choice the API defaults to AUTO, which does not decode to the schema.
            _merge(body, "toolConfig", {"functionCallingConfig": {"mode": STRICT_MODE}})
    own = body.get("generationConfig")
    own_fields = own if isinstance(own, dict) else {}
    if request.thinking is not None and "thinkingConfig" in own_fields:
        request = replace(request, thinking=None)  # the provider's own thinkingConfig wins
    generation = generation_config(request, include_thoughts=include_thoughts, model=model)
    if request.sampling is not None:
        # The provider's own fields (`body_defaults`, then `extra`) win over the setting.
        given = own_fields.keys() | _extra_generation(request).keys()
        generation.update(sampling_config(request.sampling, skip=given))
    if images is not None:
        # As for sampling: the provider's own fields win, each whole.
        given = own_fields.keys() | _extra_generation(request).keys()
        generation.update(image_config(images, skip=given))
    if generation:
        _merge(body, "generationConfig", generation)
    for key, value in request.extra.items():
        if key in _NOT_SENT_EXTRA:
            continue
        if key in _MERGED_FIELDS and isinstance(value, dict):
            _merge(body, key, value)
        else:
            body[key] = value
    return body


HOSTED_TOOLS: Final = frozenset({"web_search", "web_fetch", "code_execution", "image_generation"})
"""The hosted tools the Gemini API runs: Google Search, URL context, code execution, and
images the model makes."""

IMAGE_MODALITIES: Final[tuple[str, ...]] = ("TEXT", "IMAGE")
"""`generationConfig.responseModalities` of a call offering `ImageGeneration`: text and images."""


def image_config(tool: ImageGeneration, *, skip: AbstractSet[str] = frozenset()) -> Json:
    """`responseModalities` (text and images) and `imageConfig` for `tool`, but for those in `skip`.

    `imageConfig` holds `aspectRatio` and `imageSize` when `tool` sets them (none:
    no `imageConfig`, the model's defaults). A field in `skip` (the provider's own,
    in `body_defaults` or `extra`) is left out whole.
    """
    config: Json = {}
    if "responseModalities" not in skip:
        config["responseModalities"] = list(IMAGE_MODALITIES)
    settings: Json = {}
    if tool.aspect_ratio is not None:
        settings["aspectRatio"] = tool.aspect_ratio
    if tool.image_size is not None:
        settings["imageSize"] = tool.image_size
    if settings and "imageConfig" not in skip:
        config["imageConfig"] = settings
    return config


def hosted_tool_entry(tool: HostedTool) -> Json:
    """The `tools` entry of hosted `tool`: `googleSearch`, `urlContext` or `codeExecution`.

    Raises:
        UnsupportedContentError: `tool` sets a limit (uses, domains, location): the
            Gemini API takes none of them, and dropping one would widen the grant;
            or `tool` is one with no `tools` entry (`ImageGeneration`, see `image_config`).
    """
    if isinstance(tool, CodeExecution):
        return {"codeExecution": {}}
    if not isinstance(tool, WebSearch | WebFetch):
        raise UnsupportedContentError(f"the Gemini API has no tools entry for {tool.name}")
    limits = [
        name for name in ("max_uses", "allowed_domains", "blocked_domains") if getattr(tool, name)
    ]
    if isinstance(tool, WebSearch) and tool.user_location is not None:
        limits.append("user_location")
    if limits:
        raise UnsupportedContentError(
            f"the Gemini API's {tool.name} takes no limits; this one sets {', '.join(limits)}"
        )
    return {"googleSearch": {}} if isinstance(tool, WebSearch) else {"urlContext": {}}


def _merge(body: Json, key: str, fields: Mapping[str, JsonValue]) -> None:
    current = body.get(key)
    body[key] = {**current, **fields} if isinstance(current, dict) else dict(fields)


def system_instruction(request: ProviderRequest) -> Json | None:
    """`{"parts": [{"text": ...}]}` from `request.system` and any system messages, in order.

    Contents hold only `user` and `model` turns, so a system message met in
    the conversation joins the instruction (as pydantic-ai does).
    """
    texts = [request.system] if request.system else []
    for message in request.messages:
        if message.role == "system":
            texts.extend(_system_texts(message.content))
    if request.tools and request.parallel_tool_calls is False:
        texts.append(ONE_CALL_AT_A_TIME)
    if not texts:
        return None
    return {"parts": [{"text": "\n".join(texts)}]}


def _system_texts(parts: Sequence[ContentPart]) -> list[str]:
    texts: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif not isinstance(part, ThinkingPart | RawPart):
            raise UnsupportedContentError(f"a system message can hold only text, not {kind(part)}")
    return texts


def declaration(tool: ToolSchema) -> Json:
    """A tool as a `FunctionDeclaration`, its JSON Schema as `parametersJsonSchema`, unchanged."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parametersJsonSchema": tool.input_schema,
    }


def calling_config(choice: ToolChoice, strict: bool = False) -> Json:
    """`{"mode": AUTO | NONE | ANY}`, and `allowedFunctionNames` for one named tool.

    `strict` (a strict tool is offered) makes `auto` `STRICT_MODE`.
    """
    config: Json = {"mode": (_STRICT_CHOICE_MODES if strict else _CHOICE_MODES)[choice.mode]}
    if choice.name is not None:
        config["allowedFunctionNames"] = [choice.name]
    return config


def has_strict_tool(tools: Sequence[ToolSchema]) -> bool:
    """Whether any of `tools` asks for strict mode (`ToolSchema.strict is True`).

    The API's calling mode is per request, so one strict tool makes it for all.
    """
    # A loop, not any() over a generator: it runs on every call that offers tools.
    for tool in tools:
        if tool.strict is True:
            return True
    return False


def _has_calling_config(body: Json) -> bool:
    own = body.get("toolConfig")
    return isinstance(own, dict) and "functionCallingConfig" in own


def generation_config(
    request: ProviderRequest, *, include_thoughts: bool = False, model: str = ""
) -> Json:
    """`maxOutputTokens`, `temperature`, native output, and `thinkingConfig`.

    Native output (`responseMimeType: application/json` and the schema as
    `responseJsonSchema`) goes only on a call that sends no tools: Gemini 2.5
    refuses a response schema beside function declarations. A call with tools
    ends on text the loop validates against the schema itself.
    """
    config: Json = {}
    if request.max_tokens is not None:
        config["maxOutputTokens"] = request.max_tokens
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.output is not None and not request.tools:
        config["responseMimeType"] = "application/json"
        config["responseJsonSchema"] = request.output.schema
    thinking: Json = {"includeThoughts": True} if include_thoughts else {}
    if request.thinking is not None:
        thinking = {**thinking, **thinking_config(request.thinking, model)}
    if thinking:
        config["thinkingConfig"] = thinking
    return config


SAMPLING_FIELDS: Final[Mapping[SamplingSetting, str]] = {
    "top_p": "topP",
    "top_k": "topK",
    "stop_sequences": "stopSequences",
    "seed": "seed",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
}
"""Every sampling setting, by its `generationConfig` field."""
MOST_STOP_SEQUENCES: Final = 5
"""The API reference's limit on `generationConfig.stopSequences` ("up to 5")."""
_SEED_RANGE: Final = range(-(2**31), 2**31)
"""`generationConfig.seed` is a 32-bit integer (the API's `int32`)."""


def sampling_config(sampling: Sampling, *, skip: AbstractSet[str] = frozenset()) -> Json:
    """The sampling setting as `generationConfig` fields, but for those in `skip`.

    A field in `skip` (the provider's own, which wins) is left out.

    Raises:
        UnsupportedContentError: more stop sequences than the API takes (5), or a seed
            outside its 32-bit range.
    """
    config = {
        key: value for key, value in sampling.as_fields(SAMPLING_FIELDS).items() if key not in skip
    }
    stops = config.get("stopSequences")
    if isinstance(stops, list) and len(stops) > MOST_STOP_SEQUENCES:
        raise UnsupportedContentError(
            f"the Gemini API takes at most {MOST_STOP_SEQUENCES} stop sequences; "
            f"the sampling setting has {len(stops)}"
        )
    if "seed" in config and sampling.seed not in _SEED_RANGE:
        raise UnsupportedContentError(
            f"the Gemini API's seed is a 32-bit integer; the sampling setting's "
            f"{sampling.seed} is out of its range"
        )
    return config


def _extra_generation(request: ProviderRequest) -> Mapping[str, JsonValue]:
    value = request.extra.get("generationConfig")
    return value if isinstance(value, dict) else {}


def thinking_config(thinking: Thinking, model: str) -> Json:
    """`thinkingConfig` for a unified thinking setting, as `model`'s generation takes it.

    Gemini 3 takes a `thinkingLevel` (`"low"` or `"high"`, the nearest given);
    earlier models a `thinkingBudget` in tokens. `True` leaves the amount to the
    model; `False` is a budget of 0. Thoughts are asked for whenever it thinks,
    so they reach the turn as `ThinkingPart`s.
    """
    if thinking is False:
        return {"thinkingBudget": 0}
    config: Json = {"includeThoughts": True}
    if thinking is True:
        return config
    name = model.removeprefix("models/")
    if name.startswith("gemini-3"):
        config["thinkingLevel"] = "low" if thinking in ("minimal", "low") else "high"
    else:
        most = _PRO_MOST_BUDGET if "pro" in name else _FLASH_MOST_BUDGET
        config["thinkingBudget"] = min(_THINKING_BUDGETS[thinking], most)
    return config


_THINKING_BUDGETS: Final[Mapping[str, int]] = {
    "minimal": 512,
    "low": 1024,
    "medium": 8192,
    "high": 24_576,
    "xhigh": 32_768,
}
_FLASH_MOST_BUDGET: Final = 24_576
_PRO_MOST_BUDGET: Final = 32_768


# --- contents -----------------------------------------------------------------


def build_contents(messages: Sequence[ProviderMessage]) -> list[JsonValue]:
    """The `contents`: each user message as a `user` turn, each assistant one as `model`.

    System messages go to the system instruction; a turn left with no parts
    (only another provider's raw parts) is not sent, as the API refuses it.
    """
    names = _call_names(messages)
    contents: list[JsonValue] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant":
            parts = model_parts(message.content)
        else:
            parts = user_parts(message.content, names)
        if parts:
            contents.append(
                {"role": "model" if message.role == "assistant" else "user", "parts": parts}
            )
    return contents


def _call_names(messages: Sequence[ProviderMessage]) -> dict[str, str]:
    """Each tool call's function name by call id: a `functionResponse` must name its function."""
    return {
        part.id: part.name
        for message in messages
        for part in message.content
        if isinstance(part, ToolUsePart)
    }


def user_parts(parts: Sequence[ContentPart], names: Mapping[str, str]) -> list[JsonValue]:
    """Function responses first, then the files they returned, then the user's own parts.

    Raises:
        UnsupportedContentError: a tool call in a user message, or a result
            whose call is not in the conversation (its function's name is unknown).
    """
    responses: list[JsonValue] = []
    shown: list[JsonValue] = []
    own: list[JsonValue] = []
    for part in parts:
        if isinstance(part, ToolResultPart):
            name = names.get(part.tool_use_id)
            responses.append(function_response(part, name))
            if part.files:
                shown.append({"text": files_intro(part, name)})
                shown.extend(file_part(file) for file in part.files)
        elif isinstance(part, TextPart):
            own.append({"text": part.text})
        elif isinstance(part, ImagePart | DocumentPart):
            own.append(file_part(part))
        elif isinstance(part, ToolUsePart):
            raise UnsupportedContentError("a user message cannot hold a tool call")
        # ThinkingPart / RawPart come from a model's answer and mean nothing here.
    return [*responses, *shown, *own]


def function_response(part: ToolResultPart, name: str | None) -> Json:
    """A tool result as `functionResponse`: `{"output": ...}`, or `{"error": ...}` when it failed.

    The API documents those two keys of `response` for a result and a failure.

    Raises:
        UnsupportedContentError: `name` is None (the call is not in the conversation).
    """
    if name is None:
        raise UnsupportedContentError(
            f"the tool result for call {part.tool_use_id!r} answers no call in the conversation: "
            "a functionResponse must name the function it answers"
        )
    key = "error" if part.is_error else "output"
    response: Json = {"id": part.tool_use_id, "name": name, "response": {key: part.content}}
    return {"functionResponse": response}


def file_part(file: ImagePart | DocumentPart) -> Json:
    """An image or document: its bytes as `inlineData`, its URL as `fileData`.

    The API fetches a `fileData` URI itself: a Files API URI, a YouTube
    link, or any public or signed HTTPS URL.
    """
    source = file.source
    if isinstance(source, Base64Source):
        return {"inlineData": {"mimeType": file.media_type, "data": source.data}}
    return {"fileData": {"mimeType": file.media_type, "fileUri": source.url}}


def model_parts(parts: Sequence[ContentPart]) -> list[JsonValue]:
    """An assistant message as `model` parts, each signature back on the part it came on.

    Text and tool calls go as `text` and `functionCall`; a thought goes back
    (`thought: true`) only when signed, as Gemini reads nothing from unsigned
    thought text; other providers' `RawPart`s are dropped. An image (or other
    file) the model made goes back as `inlineData` (`fileData` by URL), so a
    later message can ask for an edit of it. The first call of the message gets
    Google's documented stand-in when no Gemini model signed it.

    Raises:
        UnsupportedContentError: a tool result in an assistant message.
    """
    builder = _ModelParts()
    for part in parts:
        if isinstance(part, RawPart):
            builder.raw(part)
        elif isinstance(part, TextPart):
            builder.add({"text": part.text})
        elif isinstance(part, ThinkingPart):
            builder.thought(part)
        elif isinstance(part, ToolUsePart):
            builder.call(part)
        elif isinstance(part, ImagePart | DocumentPart):
            builder.add(file_part(part))
        else:
            raise UnsupportedContentError(f"an assistant message cannot hold {kind(part)}")
    return builder.finish()


@dataclass(slots=True)
class _ModelParts:
    """Assembles a `model` turn's parts, carrying a signature marker to the next part."""

    parts: list[JsonValue] = field(default_factory=list)
    pending: str | None = None
    calls: int = 0

    def raw(self, part: RawPart) -> None:
        data = part.data
        if part.provider != PROVIDER or not isinstance(data, dict):
            return
        signature = data.get(SIGNATURE)
        if len(data) == 1 and isinstance(signature, str):
            self._flush()  # two markers in a row: the first keeps its own (empty) part
            self.pending = signature
        else:
            self._flush()
            self.parts.append(dict(data))

    def thought(self, part: ThinkingPart) -> None:
        if self.pending is not None:
            self.add({"text": part.thinking, "thought": True})

    def call(self, part: ToolUsePart) -> None:
        args: JsonValue = part.input if isinstance(part.input, dict) else {"arguments": part.input}
        call: Json = {"id": part.id, "name": part.name, "args": args}
        wire: Json = {"functionCall": call}
        if self.calls == 0 and self.pending is None:
            wire[SIGNATURE] = UNSIGNED_CALL_SIGNATURE
        self.calls += 1
        self.add(wire)

    def add(self, wire: Json) -> None:
        if self.pending is not None:
            wire[SIGNATURE] = self.pending
            self.pending = None
        self.parts.append(wire)

    def _flush(self) -> None:
        # A marker whose part is gone (edited out of the history) keeps its place on
        # an empty text part, the form the API streams a lone signature in.
        if self.pending is not None:
            self.add({"text": ""})

    def finish(self) -> list[JsonValue]:
        self._flush()
        return self.parts


def kind(part: ContentPart) -> str:
    """What `part` is, in words, for an error message (`an image`)."""
    return {
        ImagePart: "an image",
        DocumentPart: "a document",
        ToolResultPart: "a tool result",
        ToolUsePart: "a tool call",
    }.get(type(part), type(part).__name__)
