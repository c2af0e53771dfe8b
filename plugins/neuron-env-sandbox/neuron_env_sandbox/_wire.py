"""JSON forms of the provider's request and response, and of errors, for the child's channel.

The provider runs in the parent (its API key and network stay there); the
child's turn calls it through the channel, so `ProviderRequest` and
`ProviderResponse` cross as JSON built here. Errors cross by class name,
restricted to the provider and layer0 families, so the child's loop and the
parent's orchestrator see the classes they would see in-process. The files
a tool returned with its result cross inside the result, each checked as it
is read (the child is not trusted), so a malformed one is a `WireError`
naming it, never its data.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final, cast

from moneyed import Money
from pydantic import JsonValue, TypeAdapter, ValidationError

import layer0.errors
import neuron_turn
from layer0 import ImageSource
from neuron_tool import ToolSchema
from neuron_turn import (
    ContentPart,
    DocumentPart,
    HostedToolCall,
    ImagePart,
    OutputSchema,
    ProviderError,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    RawPart,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolChoice,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.hosted_tools import hosted_tool_from_json, hosted_tool_json
from neuron_turn.loop.provider_errors import MAX_RETRY_AFTER
from neuron_turn.loop.sampling import SAMPLING_SETTINGS, Sampling
from neuron_turn.loop.thinking import checked_thinking

__all__ = [
    "WireError",
    "decode_error",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_response",
]

_OUTPUT: Final = TypeAdapter(OutputSchema)
"""Reads a request's output schema (native or prompted) back from its JSON."""
_PARTS: Final[dict[str, type[Any]]] = {
    cls.__name__: cls
    for cls in (
        TextPart,
        ImagePart,
        DocumentPart,
        ToolUsePart,
        ToolResultPart,
        ThinkingPart,
        RawPart,
    )
}
_PROVIDER_ERRORS: Final[dict[str, type[ProviderError]]] = {
    name: value
    for name in neuron_turn.__all__
    if isinstance(value := getattr(neuron_turn, name), type) and issubclass(value, ProviderError)
}
_IMAGE_SOURCE: Final[TypeAdapter[Any]] = TypeAdapter(ImageSource)
# The fields a result's file may carry on the wire, by its type.
_FILE_FIELDS: Final[dict[object, frozenset[str]]] = {
    "ImagePart": frozenset({"type", "source", "media_type"}),
    "DocumentPart": frozenset({"type", "source", "media_type", "name"}),
}


class WireError(ValueError):
    """A message on the channel does not have the shape this module writes."""


def encode_request(request: ProviderRequest) -> dict[str, JsonValue]:
    """Return `request` as JSON."""
    return {
        "model": request.model,
        "messages": [_message(m) for m in request.messages],
        "tools": [t.model_dump(mode="json") for t in request.tools],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "system": request.system,
        "extra": dict(request.extra),
        "hosted_tools": [hosted_tool_json(t) for t in request.hosted_tools],
        "thinking": request.thinking,
        "sampling": None if request.sampling is None else request.sampling.to_json(),
        "tool_choice": None if request.tool_choice is None else _choice_json(request.tool_choice),
        "parallel_tool_calls": request.parallel_tool_calls,
        "output": _output_json(request.output),
        "prompted_output": _output_json(request.prompted_output),
    }


def _choice_json(choice: ToolChoice) -> str:
    return choice.name if choice.name is not None else choice.mode


def _output_json(output: OutputSchema | None) -> JsonValue:
    return None if output is None else cast(JsonValue, dataclasses.asdict(output))


def decode_request(data: Mapping[str, Any]) -> ProviderRequest:
    """Rebuild a request from `encode_request`'s JSON; raise `WireError` if it is not that."""
    try:
        return ProviderRequest(
            model=str(data["model"]),
            messages=[_read_message(m) for m in data["messages"]],
            tools=[ToolSchema.model_validate(t) for t in data["tools"]],
            max_tokens=data["max_tokens"],
            temperature=data["temperature"],
            system=data["system"],
            extra=dict(data["extra"]),
            hosted_tools=tuple(hosted_tool_from_json(t) for t in data.get("hosted_tools", ())),
            thinking=checked_thinking(data.get("thinking")),
            sampling=_read_sampling(data.get("sampling")),
            tool_choice=_read_choice(data.get("tool_choice")),
            parallel_tool_calls=_read_flag(data.get("parallel_tool_calls")),
            output=_read_output(data.get("output")),
            prompted_output=_read_output(data.get("prompted_output")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"not a provider request: {type(exc).__name__}: {exc}") from exc


def _read_choice(data: object) -> ToolChoice | None:
    if data is None:
        return None
    if not isinstance(data, str):
        raise WireError(f"not a tool choice: {data!r}")
    return ToolChoice.parse(data)


def _read_flag(data: object) -> bool | None:
    if data is not None and not isinstance(data, bool):
        raise WireError(f"parallel_tool_calls is true, false or null, not {data!r}")
    return data


def _read_output(data: object) -> OutputSchema | None:
    if data is None:
        return None
    try:
        return _OUTPUT.validate_python(data)
    except ValidationError as exc:
        raise WireError(f"not an output schema: {exc}") from None


def _read_sampling(data: object) -> Sampling | None:
    if data is None:
        return None
    if not isinstance(data, dict) or not set(data) <= set(SAMPLING_SETTINGS):
        raise WireError(f"not sampling settings: {data!r}")
    return Sampling.from_json(data)


def encode_response(response: ProviderResponse) -> dict[str, JsonValue]:
    """Return `response` as JSON (the cost as a decimal string, never a float)."""
    cost = response.cost
    return {
        "content": [_part(p) for p in response.content],
        "stop_reason": response.stop_reason,
        "usage": cast(dict[str, JsonValue], dataclasses.asdict(response.usage)),
        "model": response.model,
        "cost": None if cost is None else [str(cost.amount), str(cost.currency)],
        "truncated": response.truncated,
        "hosted_calls": [{"name": c.name, "input": c.input} for c in response.hosted_calls],
        "unpriced_web_searches": response.unpriced_web_searches,
        "unpriced_images": response.unpriced_images,
        "unpriced_code_executions": response.unpriced_code_executions,
    }


def decode_response(data: Mapping[str, Any]) -> ProviderResponse:
    """Rebuild a response from `encode_response`'s JSON; raise `WireError` if it is not that."""
    try:
        cost = data["cost"]
        return ProviderResponse(
            content=[_read_part(p) for p in data["content"]],
            stop_reason=data["stop_reason"],
            usage=TokenUsage(**data["usage"]),
            model=str(data["model"]),
            cost=None if cost is None else Money(Decimal(cost[0]), cost[1]),
            truncated=data["truncated"],
            hosted_calls=tuple(
                HostedToolCall(str(c["name"]), c["input"]) for c in data.get("hosted_calls", [])
            ),
            unpriced_web_searches=_count(data, "unpriced_web_searches"),
            unpriced_images=_count(data, "unpriced_images"),
            unpriced_code_executions=_count(data, "unpriced_code_executions"),
        )
    except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
        raise WireError(f"not a provider response: {type(exc).__name__}: {exc}") from exc


def _count(data: Mapping[str, Any], key: str) -> int:
    """The count `data` carries under `key` (0: none); a ValueError (a `WireError`) unless >= 0.

    The child's loop warns of unpriced fees by them: a bad one must not pass as none.
    """
    value = data.get(key, 0)
    if type(value) is not int or value < 0:
        raise ValueError(f"{key} must be a count, got {value!r}")
    return value


def encode_error(error: BaseException) -> dict[str, JsonValue]:
    """Return `error`'s class name, message and `retry_after` (the message only, no traceback).

    A turn's error that says what the turn did first (`layer0.TurnError.partial`)
    carries it too, so the parent's orchestrator can keep it and continue.
    """
    retry_after = getattr(error, "retry_after", None)
    message = error.message if isinstance(error, ProviderError) else str(error)
    encoded: dict[str, JsonValue] = {
        "type": type(error).__name__,
        "message": message,
        "retry_after": retry_after if isinstance(retry_after, int | float) else None,
    }
    partial = error.partial if isinstance(error, layer0.TurnError) else None
    if partial is not None:
        encoded["partial"] = {
            "output": partial.output.model_dump(mode="json"),
            "continuation": partial.continuation.model_dump(mode="json"),
        }
    return encoded


def decode_error(data: Mapping[str, Any], *, fallback: type[Exception]) -> Exception:
    """Rebuild a provider or layer0 error by class name; any other name becomes `fallback`."""
    name = str(data.get("type", ""))
    message = str(data.get("message", ""))
    retry_after = _wait(data.get("retry_after"))
    if name in _PROVIDER_ERRORS:
        return _PROVIDER_ERRORS[name](message, retry_after=retry_after)
    if name == "RetryableError":
        return _with_partial(layer0.RetryableError(message, retry_after=retry_after), data)
    layer0_cls = getattr(layer0.errors, name, None)
    if (
        isinstance(layer0_cls, type)
        and issubclass(layer0_cls, layer0.TurnError)
        and layer0_cls is not layer0.ToolExecutionError
    ):
        return _with_partial(layer0_cls(message), data)
    return fallback(f"{name}: {message}" if name else message)


def _wait(value: object) -> float | None:
    """`value` as a `retry_after` a retry timer can schedule, as a `ProviderError` keeps it.

    JSON from the other side may carry NaN, infinity, a negative or an enormous
    number, which a retry policy would fail on (`timedelta`, `round`) or wait
    forever for: NaN and infinities are no wait, the rest is held to 0 to
    `MAX_RETRY_AFTER` seconds.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    wait = float(value)
    if math.isnan(wait) or math.isinf(wait):
        return None
    return min(max(wait, 0.0), MAX_RETRY_AFTER)


def _with_partial(error: layer0.TurnError, data: Mapping[str, Any]) -> layer0.TurnError:
    """Return `error` with the partial turn `encode_error` sent, if any.

    One that does not read is noted on the error and left out: the orchestrator
    then runs the turn again whole.
    """
    partial = data.get("partial")
    if partial is None:
        return error
    try:
        error.partial = layer0.PartialTurn(
            layer0.TurnOutput.model_validate(partial["output"]),
            layer0.TurnInput.model_validate(partial["continuation"]),
        )
    except (KeyError, TypeError, ValidationError) as exc:
        error.add_note(f"the partial turn the child sent does not read: {exc}")
    return error


def _message(message: ProviderMessage) -> dict[str, JsonValue]:
    return {"role": message.role, "content": [_part(p) for p in message.content]}


def _read_message(data: Mapping[str, Any]) -> ProviderMessage:
    return ProviderMessage(role=data["role"], content=[_read_part(p) for p in data["content"]])


def _part(part: ContentPart) -> dict[str, JsonValue]:
    fields: dict[str, Any] = {f.name: getattr(part, f.name) for f in dataclasses.fields(part)}
    if isinstance(part, ImagePart | DocumentPart):
        fields["source"] = _IMAGE_SOURCE.dump_python(part.source, mode="json")
    if isinstance(part, ToolResultPart):
        fields["files"] = [_part(file) for file in part.files]
    return {"type": type(part).__name__, **fields}


def _read_part(data: Mapping[str, Any]) -> ContentPart:
    fields = dict(data)
    cls = _PARTS.get(str(fields.pop("type", "")))
    if cls is None:
        raise WireError(f"unknown content part {data.get('type')!r}")
    if cls is ImagePart or cls is DocumentPart:
        fields["source"] = _IMAGE_SOURCE.validate_python(fields["source"])
    if cls is ToolResultPart:
        fields["files"] = _read_files(fields.get("files", []), fields.get("tool_use_id"))
    return cast(ContentPart, cls(**fields))


def _read_files(data: object, call: object) -> tuple[ImagePart | DocumentPart, ...]:
    """The files of the result of `call`, checked: the child that sends them is not trusted."""
    if not isinstance(data, list):
        raise WireError(f"the files of the result of call {call!r} are not a list")
    files: list[ImagePart | DocumentPart] = []
    for index, item in enumerate(data):
        problem = _file_problem(item)
        if problem is not None:
            raise WireError(f"file {index} of the result of call {call!r} {problem}")
        files.append(cast(ImagePart | DocumentPart, _read_part(item)))
    return tuple(files)


def _file_problem(item: object) -> str | None:
    """What is wrong with a result's file as sent, or None (never quoting its data)."""
    if not isinstance(item, dict):
        return f"is a {type(item).__name__}, not an image or document"
    kind = item.get("type")
    if kind not in _FILE_FIELDS:
        return f"is of type {kind!r}, not ImagePart or DocumentPart"
    unknown = set(item) - _FILE_FIELDS[kind]
    if unknown:
        return f"has unknown fields {sorted(unknown)}"
    if not isinstance(item.get("media_type"), str):
        return "has no media_type string"
    if item.get("name") is not None and not isinstance(item["name"], str):
        return "has a name that is not a string"
    try:
        _IMAGE_SOURCE.validate_python(item.get("source"))
    except ValidationError as exc:
        # The error's own text would quote the input, which may be megabytes of base64.
        error = exc.errors()[0]
        where = ".".join(str(step) for step in error["loc"])
        return f"has a source that does not read ({where}: {error['msg']})"
    return None
