"""Response side: a Gemini `GenerateContentResponse` to `neuron_turn` provider types (no I/O).

`parse_response` reads the non-streamed body and the body a stream's chunks
fold into (`_stream`), so both give the same answer.

Parts: `text` becomes a `TextPart`, `text` with `thought: true` a
`ThinkingPart`, `functionCall` a `ToolUsePart` (its `id`, or one made by
`_tool_ids`), `inlineData` an `ImagePart` for an image (`ImageGeneration`:
the model's images), else a `DocumentPart`, its bytes as the API's base64 and
its media type the API's `mimeType`. A part's `thoughtSignature` becomes this provider's
`RawPart("google", {"thoughtSignature": ...})` right before the part it came
on, and `_wire` puts it back on that part. It is not `ThinkingPart.signature`:
the Anthropic provider sends any signed thinking back as its own and would
fail on Gemini's signature, while every other provider drops a `RawPart`. A
signed part the loop has no type for (an empty text, a built-in tool's code)
is kept whole as a `RawPart` so its signature goes back in its place; unsigned
ones are skipped with a debug log. A thought image (`inlineData` with `thought:
true`, a draft Gemini 3's image models make before the answer's image) is such
a part: not an image of the answer.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from layer0 import Base64Source
from neuron_turn.loop.hosted_tools import HostedToolCall
from neuron_turn.loop.provider import (
    ContentPart,
    DocumentPart,
    ImagePart,
    RawPart,
    StopReason,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolUsePart,
)

from ._tool_ids import synthesised_call_id
from ._wire import PROVIDER, SIGNATURE

logger = logging.getLogger("neuron_provider_google")

_FILTERED: Final = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "LANGUAGE",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "ESCALATION",
        "PUP_LIMITED_DISABLED",
        "MODEL_ARMOR",
    }
)
"""Finish reasons that mean the answer was stopped by a filter: the `content_filter` stop."""
_TRUNCATED: Final = frozenset({"MAX_TOKENS", "CONTINUATION"})
_MALFORMED: Final = frozenset(
    {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MALFORMED_RESPONSE"}
)
"""Finish reasons that mean the model wrote something unusable: a `ProviderResponseError`."""
_REQUEST_FAULTS: Final = frozenset({"MISSING_THOUGHT_SIGNATURE"})


class MalformedResponseError(ValueError):
    """A 200 body that is JSON but not a usable `GenerateContentResponse`."""


class UnusableAnswerError(Exception):
    """The model's answer is unusable: a malformed call, an `inlineData` part without its data."""


class BlockedRequestError(Exception):
    """The API refused the request itself: a blocked prompt, a missing thought signature."""


@dataclass(frozen=True, slots=True)
class Completion:
    """An answer read into provider types (cost is the provider's business)."""

    content: list[ContentPart]
    stop_reason: StopReason
    usage: TokenUsage
    model: str
    hosted_calls: tuple[HostedToolCall, ...] = ()
    """What the hosted tools did for the answer: the code run, the searches, the fetches."""
    media_usage: Mapping[str, JsonValue] | None = None
    """`usageMetadata` as sent when it counts tokens of audio, images, video or documents,
    which some models price apart (None: text only)."""
    web_searches: int = 0
    """The Google Search grounding units Google bills for the answer (`billed_searches`):
    1 for a grounded prompt of Gemini 2.x and older, each search query for Gemini 3."""


def parse_response(data: object, *, fallback_model: str, fallback_salt: str) -> Completion:
    """Read a `GenerateContentResponse` (already JSON-decoded); the first candidate is the answer.

    Raises:
        MalformedResponseError: not an object, no candidate, or only parts of unknown kinds.
        BlockedRequestError: the prompt was blocked (`promptFeedback.blockReason`) or the
            API says the request lacked a thought signature.
        UnusableAnswerError: the model's call or answer was malformed (`finishReason`
            `MALFORMED_FUNCTION_CALL` and its kin), or an `inlineData` part of it lacks its
            data or media type (see `inline_file`).
    """
    if not isinstance(data, dict):
        raise MalformedResponseError("the body is not a JSON object")
    candidates = data.get("candidates")
    candidate = candidates[0] if isinstance(candidates, list) and candidates else None
    if not isinstance(candidate, dict):
        raise _no_candidate(data.get("promptFeedback"))
    reason = candidate.get("finishReason")
    reason = reason if isinstance(reason, str) else ""
    if reason in _MALFORMED or reason in _REQUEST_FAULTS:
        cls = UnusableAnswerError if reason in _MALFORMED else BlockedRequestError
        raise cls(_finish_detail(reason, candidate.get("finishMessage")))
    response_id = data.get("responseId")
    salt = response_id if isinstance(response_id, str) and response_id else fallback_salt
    content, skipped = parse_parts(_parts_of(candidate.get("content")), salt=salt)
    if skipped and not any(not isinstance(part, RawPart) for part in content):
        raise MalformedResponseError(f"the answer holds only parts of unsupported kinds {skipped}")
    model = data.get("modelVersion")
    model = model if isinstance(model, str) and model else fallback_model
    grounding = candidate.get("groundingMetadata")
    return Completion(
        content=content,
        stop_reason=stop_reason(reason, content),
        usage=parse_usage(data.get("usageMetadata")),
        model=model,
        hosted_calls=hosted_calls(candidate, content),
        media_usage=media_usage(data.get("usageMetadata")),
        web_searches=0 if grounding is None else billed_searches(grounding, model, fallback_model),
    )


def hosted_calls(
    candidate: Mapping[str, JsonValue], content: Sequence[ContentPart]
) -> tuple[HostedToolCall, ...]:
    """The hosted tools' calls of an answer, for the record.

    The code it ran and the images it made (in order; an image as its media type
    and size in bytes, never its bytes), the searches it made
    (`groundingMetadata.webSearchQueries`), the addresses it fetched
    (`urlContextMetadata`). A field of another shape is left out, never an error.
    """
    calls: list[HostedToolCall] = []
    for part in content:
        if type(part) is ImagePart and isinstance(part.source, Base64Source):
            size = decoded_size(part.source.data)
            calls.append(
                HostedToolCall("image_generation", {"media_type": part.media_type, "bytes": size})
            )
        elif (
            isinstance(part, RawPart)
            and isinstance(part.data, dict)
            and isinstance(part.data.get("executableCode"), dict)
        ):
            calls.append(HostedToolCall("code_execution", part.data["executableCode"]))
    grounding = candidate.get("groundingMetadata")
    queries = grounding.get("webSearchQueries") if isinstance(grounding, dict) else None
    if isinstance(queries, list):
        calls += [HostedToolCall("web_search", {"query": q}) for q in queries if isinstance(q, str)]
    fetched = candidate.get("urlContextMetadata")
    urls = fetched.get("urlMetadata") if isinstance(fetched, dict) else None
    if isinstance(urls, list):
        calls += [
            HostedToolCall("web_fetch", {"url": url["retrievedUrl"]})
            for url in urls
            if isinstance(url, dict) and isinstance(url.get("retrievedUrl"), str)
        ]
    return tuple(calls)


_GEMINI_GENERATION: Final = re.compile(r"gemini-(\d{1,4})")


def billed_searches(grounding: object, *models: str) -> int:
    """How many Google Search grounding units Google bills for an answer's `groundingMetadata`.

    What Google documents (checked 2026-11):
    https://ai.google.dev/gemini-api/docs/google-search#pricing says Gemini 3 bills "each
    search query that the model decides to execute" (two queries in one call are two
    billable uses) and ignores empty queries "when counting unique queries"; "with Gemini
    2.5 or older models, your project is billed per prompt".
    https://ai.google.dev/gemini-api/docs/pricing gives $35 per 1,000 grounded prompts for
    Gemini 2.x and $14 per 1,000 search queries for Gemini 3, the prices genai-prices lists
    as `web_searches_kcount`. So: the distinct non-empty `webSearchQueries` for Gemini 3; 1
    for an older model's answer that lists at least one (a prompt is grounded when the model
    searched, as https://cloud.google.com/vertex-ai/generative-ai/pricing defines a
    grounding prompt). The generation is the first of `models` (the answered model, then
    the one asked for) that names one; a model that names none (`gemini-flash-latest`, a
    tuned model) is counted per query, never less than per prompt.

    The free allowances (1,500 grounded prompts a day for Gemini 2.x, 5,000 queries a month
    for Gemini 3) depend on the project's other calls, which one answer cannot know: every
    billed unit is counted, so a budget errs on the safe side. Without queries listed
    nothing is counted: `urlContext` alone also fills `groundingChunks`. genai-prices'
    own Google extractor reads `usageMetadata` only, not grounding. A field of another shape
    (not an object, queries not a list, entries not strings) counts nothing, never an error.
    """
    queries = grounding.get("webSearchQueries") if isinstance(grounding, dict) else None
    if not isinstance(queries, list):
        return 0
    unique = {query for query in queries if isinstance(query, str) and query}
    if not unique:
        return 0
    return 1 if _billed_per_prompt(models) else len(unique)


def _billed_per_prompt(models: Iterable[str]) -> bool:
    for model in models:
        generation = _GEMINI_GENERATION.search(model)
        if generation is not None:
            return int(generation[1]) < 3
    return False


def _no_candidate(feedback: object) -> Exception:
    block = feedback.get("blockReason") if isinstance(feedback, dict) else None
    if isinstance(block, str) and block:
        message = feedback.get("blockReasonMessage") if isinstance(feedback, dict) else None
        detail = f": {message}" if isinstance(message, str) and message else ""
        return BlockedRequestError(f"the prompt was blocked (blockReason {block}){detail}")
    return MalformedResponseError("the body has no candidate")


def _finish_detail(reason: str, message: object) -> str:
    what = {
        "MALFORMED_FUNCTION_CALL": "the model wrote a function call that cannot be parsed",
        "UNEXPECTED_TOOL_CALL": "the model called a function it was not offered",
        "TOO_MANY_TOOL_CALLS": "the model made too many tool calls",
        "MALFORMED_RESPONSE": "the model's answer was malformed",
        "MISSING_THOUGHT_SIGNATURE": "a function call in the history lacks its thought signature",
    }[reason]
    detail = f": {message}" if isinstance(message, str) and message else ""
    return f"{what} (finishReason {reason}){detail}"


def _parts_of(content: object) -> list[object]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else []


def parse_parts(parts: Iterable[object], *, salt: str) -> tuple[list[ContentPart], list[str]]:
    """The content parts the wire parts map to, and the kinds of the parts skipped.

    Raises:
        UnusableAnswerError: an `inlineData` part without its data or media type.
    """
    content: list[ContentPart] = []
    skipped: list[str] = []
    calls = 0
    for index, part in enumerate(parts):
        mapped = (
            _mapped(part, salt=salt, position=calls, index=index)
            if isinstance(part, dict)
            else None
        )
        signature = part.get(SIGNATURE) if isinstance(part, dict) else None
        signed = isinstance(signature, str) and bool(signature)
        if mapped is None:
            what = _part_kind(part)
            if signed:
                content.append(RawPart(PROVIDER, _kept(part)))  # type: ignore[arg-type]
            elif what != "empty text":
                logger.debug("part of kind %r skipped: the loop has no use for it", what)
                skipped.append(what)
            continue
        if signed and not isinstance(mapped, RawPart):  # a whole part keeps its own
            content.append(RawPart(PROVIDER, {SIGNATURE: signature}))
        calls += isinstance(mapped, ToolUsePart)
        content.append(mapped)
    return content, skipped


_KEPT_WHOLE: Final = frozenset({"executableCode", "codeExecutionResult"})
"""Parts of the API's own code execution: the model's next calls build on them, so they
are kept whole (signature included) and go back in their place."""


def _mapped(
    part: Mapping[str, JsonValue], *, salt: str, position: int, index: int
) -> ContentPart | None:
    call = part.get("functionCall")
    if isinstance(call, dict):
        return parse_call(call, salt=salt, position=position)
    if not _KEPT_WHOLE.isdisjoint(part):
        return RawPart(PROVIDER, dict(part))
    if "inlineData" in part:
        # A thought image is a draft, not the answer's: kept whole when signed, else skipped.
        return None if part.get("thought") is True else inline_file(part["inlineData"], index)
    text = part.get("text")
    if isinstance(text, str) and text:
        return ThinkingPart(text) if part.get("thought") is True else TextPart(text)
    return None


def parse_call(call: Mapping[str, JsonValue], *, salt: str, position: int) -> ToolUsePart:
    """A `functionCall`: its `id` when it has one, else one made up (see `_tool_ids`).

    `args` is a JSON object on the wire; anything else (missing: `{}`) is
    kept as it came, and the tool registry refuses what is not an object, so
    the model gets an error result it can correct.
    """
    name = call.get("name")
    name = name if isinstance(name, str) else ""
    args = call.get("args", {})
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = synthesised_call_id(salt=salt, position=position, name=name, args=args)
    return ToolUsePart(call_id, name, args)


def inline_file(inline: JsonValue, index: int) -> ImagePart | DocumentPart:
    """An answer's `inlineData` (part `index`, from 0): an `ImagePart` for an `image/*` type.

    Any other type (audio, a PDF: no model is asked for them here, but one may
    send them) is a `DocumentPart`, kept and sent back as it came rather than lost.

    Raises:
        UnusableAnswerError: `inline` is not an object, or lacks a non-empty string
            `data` (base64) or `mimeType`.
    """
    where = f"part {index + 1} of the answer (inlineData)"
    if not isinstance(inline, dict):
        raise UnusableAnswerError(f"{where} is {type(inline).__name__}, not an object")
    data, media_type = inline.get("data"), inline.get("mimeType")
    if not isinstance(data, str) or not data:
        got = "none" if data is None else f"{type(data).__name__} {_short(data)}"
        raise UnusableAnswerError(f"{where} has no data as base64 text (got {got})")
    if not isinstance(media_type, str) or not media_type:
        got = "none" if media_type is None else _short(media_type)
        raise UnusableAnswerError(f"{where} has no mimeType (got {got})")
    source = Base64Source(data=data)
    if media_type.startswith("image/"):
        return ImagePart(source, media_type)
    return DocumentPart(source, media_type)


def _short(value: JsonValue) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def decoded_size(data: str) -> int:
    """How many bytes base64 `data` holds, counted from its length (no decoding)."""
    return len(data.rstrip("=")) * 3 // 4


def _part_kind(part: object) -> str:
    if not isinstance(part, dict):
        return type(part).__name__
    if part.get("text") == "":
        return "empty text"
    keys = [key for key in part if key not in (SIGNATURE, "thought")]
    return keys[0] if keys else "empty part"


def _kept(part: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """A signed part with no loop type, whole; a lone signature gets an empty text."""
    kept = dict(part)
    if len(kept) == 1:
        kept["text"] = ""
    return kept


def stop_reason(reason: str, content: Sequence[ContentPart]) -> StopReason:
    """Map `finishReason`; a call with any other reason (`STOP`, none, unknown) is `tool_use`.

    A truncated or filtered answer says so even beside a call, whose
    arguments may have been cut short.
    """
    if reason in _TRUNCATED:
        return "max_tokens"
    if reason in _FILTERED:
        return "content_filter"
    if any(isinstance(part, ToolUsePart) for part in content):
        return "tool_use"
    return "end_turn"


def parse_usage(usage: object) -> TokenUsage:
    """Read `usageMetadata` as genai-prices does for Google.

    `input_tokens` is `promptTokenCount` (cached tokens included, as
    `TokenUsage` counts them) plus `toolUsePromptTokenCount`; `output_tokens`
    is `candidatesTokenCount` plus `thoughtsTokenCount` (thoughts are billed
    as output); `cache_read_tokens` is `cachedContentTokenCount`.
    """
    if not isinstance(usage, dict):
        return TokenUsage()
    cached = usage.get("cachedContentTokenCount")
    return TokenUsage(
        input_tokens=token_count(usage.get("promptTokenCount"))
        + token_count(usage.get("toolUsePromptTokenCount")),
        output_tokens=token_count(usage.get("candidatesTokenCount"))
        + token_count(usage.get("thoughtsTokenCount")),
        cache_read_tokens=None if cached is None else token_count(cached),
    )


_COUNTS: Final = (
    "promptTokenCount",
    "cachedContentTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "toolUsePromptTokenCount",
)
_DETAILS: Final = (
    "promptTokensDetails",
    "cacheTokensDetails",
    "candidatesTokensDetails",
    "toolUsePromptTokensDetails",
)


def media_usage(usage: object) -> Mapping[str, JsonValue] | None:
    """`usage`'s counts and modality details when a detail counts tokens other than text.

    genai-prices reads those details (`input_audio_tokens`...) and prices audio
    apart on models that list it; `TokenUsage` has no place for them. What is
    returned is rebuilt from the well-formed parts only (counts as `token_count`
    reads them, details with a string modality): the API's answer is untrusted,
    and genai-prices would fail on a detail of another shape.
    """
    if not isinstance(usage, dict):
        return None
    cleaned: dict[str, JsonValue] = {
        key: token_count(usage[key]) for key in _COUNTS if key in usage
    }
    media = False
    for key in _DETAILS:
        details = usage.get(key)
        kept: list[JsonValue] = [
            {"modality": detail["modality"], "tokenCount": token_count(detail.get("tokenCount"))}
            for detail in (details if isinstance(details, list) else ())
            if isinstance(detail, dict) and isinstance(detail.get("modality"), str)
        ]
        if kept:
            cleaned[key] = kept
        media = media or any(
            isinstance(d, dict) and d["modality"] != "TEXT" and d["tokenCount"] for d in kept
        )
    return cleaned if media else None


def token_count(value: object) -> int:
    """A token count; anything but a positive int (a bool, a string, a negative) is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
