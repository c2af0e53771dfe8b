"""Typed turn results: an output type, its JSON Schema, validation, and reading the result.

A turn given an output type (a pydantic model, a dataclass, a TypedDict, any
type pydantic's `TypeAdapter` takes, or a raw JSON Schema) ends only when the
model's final answer validates against it. How the model is asked for it is
the output mode, one per provider unless the caller picks one:

- `native`: the provider's own JSON-schema output (OpenAI `response_format`,
  Ollama `format`, the local server's grammar); the request carries
  `ProviderRequest.output`.
- `tool`: a `final_answer` tool whose input is the schema, which the model is
  made to call (Anthropic); strict (`OutputSpec(strict=...)`) as any strict tool.
- `prompted`: the schema in the system prompt; works with any model.

On the layer0 wire the result is the output message, two blocks: a text
block holding the value as compact JSON (what `Content.as_text()` returns)
and a custom block `{"type": "custom", "content_type": "neuron.output",
"data": {"name": <output name>, "value": <the value as JSON>}}`, which the
Rust reference reads as any custom block. `output_value(output, Answer)`
reads it back as the Python type. A schema that is not an object at its root
(`int`, `list[str]`) is asked for wrapped as `{"response": ...}` and unwrapped.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import (
    Any,
    Final,
    Generic,
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    cast,
    get_origin,
    is_typeddict,
    overload,
    runtime_checkable,
)

from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from layer0 import Content, CustomBlock, TextBlock, TurnOutput
from neuron_tool import StrictSchemaError, ToolInputError, ToolSchema
from neuron_tool.schema import InputValidator, InvalidSchemaError, json_schema_of
from neuron_tool.strict import strict_form as strict_tool_form

from ._nesting import MAX_INPUT_DEPTH, deeper_than

__all__ = [
    "FINAL_ANSWER_TOOL",
    "OUTPUT_CONTENT_TYPE",
    "OutputError",
    "OutputMissingError",
    "OutputMode",
    "OutputSchema",
    "OutputSpec",
    "OutputTypeError",
    "OutputValidationError",
    "SupportsOutputModes",
    "output_content",
    "output_value",
]

T = TypeVar("T")

OutputMode: TypeAlias = Literal["native", "tool", "prompted"]
"""How the model is asked for a typed answer: the provider's JSON-schema output, a
forced `final_answer` tool, or the schema in the system prompt."""

OUTPUT_CONTENT_TYPE: Final = "neuron.output"
"""The `content_type` of the custom block holding a turn's validated output."""
FINAL_ANSWER_TOOL: Final = "final_answer"
"""The default name of the tool the model answers through in `tool` mode."""

_WRAP_KEY: Final = "response"
_MAX_ERRORS: Final = 5
_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9_-]")
_FENCE: Final = re.compile(r"\A```[A-Za-z0-9_-]*\s*\n(?P<body>.*?)\n?```\Z", re.DOTALL)


class OutputError(Exception):
    """Base of the errors about typed turn results."""


class OutputTypeError(OutputError, TypeError):
    """The output type cannot be used: pydantic has no schema for it, or a raw schema is invalid."""


class OutputValidationError(OutputError, ValueError):
    """A model's answer does not validate; `str()` is the concise text sent back to the model."""


class OutputMissingError(OutputError, LookupError):
    """The turn output holds no validated result (it ended another way than `complete`)."""


@runtime_checkable
class SupportsOutputModes(Protocol):
    """A provider that names the output modes it supports, best first.

    A turn with an output type uses the first one unless told otherwise; a
    provider that does not say gets `prompted`, which every model can follow.
    """

    output_modes: tuple[OutputMode, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class OutputSchema:
    """What a provider request carries for native JSON-schema output.

    `schema` is always an object at its root; `strict` is true only when the
    schema fits OpenAI's strict mode (every property required, no extra ones).
    """

    name: str
    schema: dict[str, JsonValue]
    description: str | None = None
    strict: bool = False


class OutputSpec(Generic[T]):
    """An output type compiled once: its JSON Schema, its validator, its name.

    `OutputSpec(Answer)` for a Python type; `OutputSpec.json_schema({...})` for a
    raw JSON Schema (values are then plain JSON). Pass either, or just the type,
    as `output_type=` to `NeuronTurn`.

    Args:
        output_type: Any type pydantic's `TypeAdapter` takes.
        name: The name the model sees (schema name, tool description); default: the type's.
        description: What the answer is, for the model; default: the type's docstring.
        strict: Ask for strict mode, as pydantic-ai's `ToolOutput(strict=...)`: native
            output's OpenAI strict mode, and in `tool` mode a strict final-answer tool
            (`neuron_tool.strict`), which a provider without strict mode refuses when
            the turn is made. None (the default): strict when the schema fits strict
            mode as it is (every property required, no object of free keys), the
            final-answer tool only over a provider that infers strict tools
            (`infers_strict_tools`: OpenAI's, as pydantic-ai infers). False: never.
        mode: The output mode; default: the provider's preferred one.
        tool_name: The tool the model answers through in `tool` mode.

    Raises:
        OutputTypeError: pydantic cannot build a JSON Schema for `output_type`.
    """

    name: str
    """The name the model sees (letters, digits, `_` and `-`, at most 64)."""
    description: str | None
    """What the answer is, for the model."""
    schema: dict[str, JsonValue]
    """The JSON Schema the model's answer must match (an object at its root)."""
    wrapped: bool
    """Whether the answer is asked for as `{"response": <value>}` (a non-object schema)."""
    strict: bool
    """Whether native output asks for OpenAI's strict mode: `strict=True`, or None with a
    schema strict mode takes as it is."""
    mode: OutputMode | None
    """The output mode asked for (None: the provider's preferred one)."""
    tool_name: str
    """The tool the model answers through in `tool` mode."""

    def __init__(
        self,
        output_type: type[T] | Any,
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool | None = None,
        mode: OutputMode | None = None,
        tool_name: str = FINAL_ANSWER_TOOL,
    ) -> None:
        try:
            adapter: TypeAdapter[T] = TypeAdapter(output_type)
            schema = json_schema_of(adapter, mode="validation")
        except (PydanticSchemaGenerationError, PydanticUserError) as exc:
            raise OutputTypeError(
                f"no JSON Schema for the output type {output_type!r}: {exc}"
            ) from exc
        self._adapter: TypeAdapter[T] | None = adapter
        self._validator: InputValidator | None = None
        self._setup(
            schema,
            name=name or _type_name(output_type),
            description=description if description is not None else _type_doc(output_type),
            strict=strict,
            mode=mode,
            tool_name=tool_name,
        )

    @classmethod
    def json_schema(
        cls,
        schema: Mapping[str, JsonValue],
        *,
        name: str = "output",
        description: str | None = None,
        strict: bool | None = None,
        mode: OutputMode | None = None,
        tool_name: str = FINAL_ANSWER_TOOL,
    ) -> OutputSpec[JsonValue]:
        """Return a spec for a raw JSON Schema (draft 2020-12); values are plain JSON.

        Raises:
            OutputTypeError: `schema` is not a valid JSON Schema.
        """
        spec = cast(OutputSpec[JsonValue], cls.__new__(cls))
        given = dict(schema)
        try:
            spec._validator = InputValidator(given)
        except InvalidSchemaError as exc:
            raise OutputTypeError(f"the output schema is not a valid JSON Schema: {exc}") from exc
        spec._adapter = None
        described = given.get("description")
        spec._setup(
            given,
            name=name,
            description=description or (described if isinstance(described, str) else None),
            strict=strict,
            mode=mode,
            tool_name=tool_name,
        )
        return spec

    def _setup(
        self,
        schema: dict[str, JsonValue],
        *,
        name: str,
        description: str | None,
        strict: bool | None,
        mode: OutputMode | None,
        tool_name: str,
    ) -> None:
        self.name = _NAME_CHARS.sub("_", name)[:64] or "output"
        self.description = description
        self.wrapped = schema.get("type") != "object"
        self.schema = _wrap(schema) if self.wrapped else schema
        strict_form = _strict_form(self.schema)
        self.strict = strict_form is not None if strict is None else strict
        self._strict_schema = strict_form if strict_form is not None else self.schema
        self._strict_asked = strict
        self._tools: dict[bool, ToolSchema] = {}
        """The final-answer tool by whether the provider infers strict tools, made once."""
        self.mode = mode
        self.tool_name = tool_name

    def __repr__(self) -> str:
        return f"OutputSpec(name={self.name!r}, mode={self.mode!r})"

    def provider_schema(self) -> OutputSchema:
        """Return what a request carries for native output."""
        schema = self._strict_schema if self.strict else self.schema
        return OutputSchema(self.name, schema, self.description, self.strict)

    def tool_schema(self, *, infer_strict: bool = False) -> ToolSchema:
        """Return the final-answer tool of `tool` mode, for a provider inferring strict or not.

        It is strict (`ToolSchema.strict`) when made with `strict=True`, or with
        `strict=None` where the schema fits strict mode as it is and `infer_strict`
        (the provider's `infers_strict_tools`); else `strict` is left None, as a tool
        that asks for nothing.
        """
        made = self._tools.get(infer_strict)
        if made is not None:
            # One object per spec, so a provider's strict form of it is written once a turn.
            return made
        strict = self._strict_asked
        if strict is None:
            # Asked for only where strict mode can take the schema as it is, never refused.
            strict = infer_strict and self.strict and _has_tool_form(self.schema, self.tool_name)
        what = f": {self.description}" if self.description else ""
        made = self._tools[infer_strict] = ToolSchema(
            name=self.tool_name,
            description=f"Give the final answer ({self.name}{what}); this ends the conversation.",
            input_schema=self.schema,
            strict=True if strict else None,
        )
        return made

    def validate_text(self, text: str) -> T:
        """Validate a text answer: JSON, possibly in a code fence.

        Raises:
            OutputValidationError: not JSON, JSON nested deeper than a tool call's
                arguments may be (`MAX_INPUT_DEPTH`), or JSON that does not validate.
        """
        too_deep = f"the answer nests deeper than {MAX_INPUT_DEPTH} levels of objects and arrays"
        try:
            value: JsonValue = json.loads(_json_body(text))
        except RecursionError:
            raise OutputValidationError(too_deep) from None
        except ValueError as exc:
            raise OutputValidationError(f"the answer is not valid JSON ({exc})") from exc
        if deeper_than(value, MAX_INPUT_DEPTH):
            # As a tool call's arguments: what nests this deep crashes the code reading it.
            raise OutputValidationError(too_deep)
        return self.validate_json(value)

    def validate_json(self, value: JsonValue) -> T:
        """Validate a decoded answer (unwrapping `{"response": ...}` for non-object types).

        Raises:
            OutputValidationError: the value does not validate.
        """
        if self.wrapped:
            if not isinstance(value, dict) or _WRAP_KEY not in value:
                raise OutputValidationError(
                    f'the answer must be a JSON object {{"{_WRAP_KEY}": <value>}}'
                )
            value = value[_WRAP_KEY]
        return self.validate_value(value)

    def validate_value(self, value: object) -> T:
        """Validate a value said to be of the output type (what an output validator returned).

        Raises:
            OutputValidationError: it is not.
        """
        if self._adapter is not None:
            try:
                return self._adapter.validate_python(value)
            except ValidationError as exc:
                raise OutputValidationError(_pydantic_errors(exc)) from exc
        assert self._validator is not None
        try:
            self._validator.check(self.name, cast(JsonValue, value))
        except ToolInputError as exc:
            raise OutputValidationError(f"at {exc.path}: {exc.message}") from exc
        return cast(T, value)

    def validate_partial(self, value: JsonValue) -> T:
        """Validate an answer still arriving: its last string, item or entry may be cut short.

        Raises:
            OutputValidationError: not valid even so (a required field has yet to come).
        """
        if self.wrapped:
            if not isinstance(value, dict) or _WRAP_KEY not in value:
                raise OutputValidationError(f"{_WRAP_KEY!r} has yet to come")
            value = value[_WRAP_KEY]
        if self._adapter is None:
            return cast(T, value)  # a raw JSON Schema: its JSON, as far as it came
        try:
            return self._adapter.validate_python(
                value, experimental_allow_partial="trailing-strings"
            )
        except ValidationError as exc:
            raise OutputValidationError(_pydantic_errors(exc)) from exc

    def dump(self, value: T) -> JsonValue:
        """Return a validated value as JSON."""
        if self._adapter is None:
            return cast(JsonValue, value)
        return cast(JsonValue, self._adapter.dump_python(value, mode="json"))


def output_spec(output_type: OutputSpec[T] | type[T] | Mapping[str, JsonValue]) -> OutputSpec[Any]:
    """Return `output_type` as a spec: a spec as is, a mapping as a raw schema, else a type."""
    if isinstance(output_type, OutputSpec):
        return output_type
    if isinstance(output_type, Mapping):
        return OutputSpec.json_schema(output_type)
    return OutputSpec(output_type)


def output_content(spec: OutputSpec[Any], value: JsonValue) -> Content:
    """Return the output message for a validated value (see the module docstring)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    data: JsonValue = {"name": spec.name, "value": value}
    return Content([TextBlock(text=text), CustomBlock(content_type=OUTPUT_CONTENT_TYPE, data=data)])


@overload
def output_value(output: TurnOutput) -> JsonValue: ...
@overload
def output_value(output: TurnOutput, output_type: OutputSpec[T]) -> T: ...
@overload
def output_value(output: TurnOutput, output_type: type[T]) -> T: ...
def output_value(output: TurnOutput, output_type: Any = None) -> Any:
    """Return a turn's validated result, as `output_type` (default: plain JSON).

    Works on any `TurnOutput`, however it arrived (an orchestrator, the wire).

    Raises:
        OutputMissingError: the turn did not end with a validated result.
        OutputValidationError: the result does not validate as `output_type`.
    """
    value = _stored_value(output)
    if output_type is None:
        return value
    spec = output_type if isinstance(output_type, OutputSpec) else _cached_spec(output_type)
    return spec.validate_json(_wrap_value(value) if spec.wrapped else value)


def _stored_value(output: TurnOutput) -> JsonValue:
    blocks = output.message.root
    if not isinstance(blocks, str):
        for block in blocks:
            if isinstance(block, CustomBlock) and block.content_type == OUTPUT_CONTENT_TYPE:
                data = block.data
                if isinstance(data, dict) and "value" in data:
                    return data["value"]
    raise OutputMissingError(
        f"the turn output holds no validated result (exit reason: {output.exit_reason!r})"
    )


@lru_cache(maxsize=64)
def _cached_spec(output_type: Any) -> OutputSpec[Any]:
    return OutputSpec(output_type)


def _wrap_value(value: JsonValue) -> JsonValue:
    return {_WRAP_KEY: value}


def _wrap(schema: dict[str, JsonValue]) -> dict[str, JsonValue]:
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, JsonValue] = {
        "type": "object",
        "properties": {_WRAP_KEY: inner},
        "required": [_WRAP_KEY],
        "additionalProperties": False,
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped


def _has_tool_form(schema: dict[str, JsonValue], tool_name: str) -> bool:
    """Whether a strict tool's form (`neuron_tool.strict_form`) exists for `schema`.

    A schema `_strict_form` passes may still use what strict tools have no form
    for (a tuple, `not`): sending it strict would be refused before the call.
    """
    try:
        strict_tool_form(schema, tool=tool_name)
    except StrictSchemaError:
        return False
    return True


def _strict_form(schema: JsonValue) -> dict[str, JsonValue] | None:
    """Return `schema` as OpenAI's strict mode takes it, or None when it does not fit as it is.

    Strict mode wants every object to list all its properties as required and
    to forbid others; objects that allow no extra keys implicitly get
    `additionalProperties: false` spelled out. Unlike `neuron_tool.strict_form`,
    nothing is rewritten (an optional property made nullable, an unsupported
    keyword moved into a description): native output sends this schema itself,
    and the model's text answer has no call to restore.
    """
    result = _strict_node(schema)
    return result if isinstance(result, dict) else None


class _NotStrict(Exception):
    pass


def _strict_node(node: JsonValue) -> JsonValue:
    try:
        return _strict_walk(node)
    except _NotStrict:
        return None


def _strict_walk(node: JsonValue) -> JsonValue:
    if isinstance(node, list):
        return [_strict_walk(item) for item in node]
    if not isinstance(node, dict):
        return node
    walked = {key: _strict_walk(value) for key, value in node.items()}
    properties = node.get("properties")
    if isinstance(properties, dict) or node.get("type") == "object":
        if not isinstance(properties, dict) and node.get("additionalProperties") is not False:
            raise _NotStrict  # an open object ("any keys"): strict mode would make it {}
        names = set(properties) if isinstance(properties, dict) else set()
        required = node.get("required", [])
        extra = node.get("additionalProperties", False)
        if not isinstance(required, list) or set(map(str, required)) != names or extra is not False:
            raise _NotStrict
        walked["additionalProperties"] = False
    return walked


def _json_body(text: str) -> str:
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced is not None:
        return fenced.group("body")
    if stripped.startswith(("{", "[", '"')) or not stripped:
        return stripped
    # Prose around one object ("Here it is: {...}"): keep the object, let JSON judge it.
    start, end = stripped.find("{"), stripped.rfind("}")
    return stripped[start : end + 1] if 0 <= start < end else stripped


def _pydantic_errors(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    shown = [
        f"at {'.'.join(str(part) for part in error['loc']) or 'the top'}: {error['msg']}"
        for error in errors[:_MAX_ERRORS]
    ]
    more = len(errors) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def _type_name(output_type: Any) -> str:
    if isinstance(output_type, type) and get_origin(output_type) is None:
        return output_type.__name__
    return "output"


def _type_doc(output_type: Any) -> str | None:
    is_documented = (
        isinstance(output_type, type)
        and (
            issubclass(output_type, BaseModel)
            or dataclasses.is_dataclass(output_type)
            or is_typeddict(output_type)
        )
        and output_type.__doc__
    )
    if not is_documented:
        return None
    doc = output_type.__doc__ or ""
    # dataclasses invent a signature docstring ("Answer(answer: int)"); it says nothing.
    if dataclasses.is_dataclass(output_type) and doc.startswith(f"{_type_name(output_type)}("):
        return None
    return " ".join(doc.split())
