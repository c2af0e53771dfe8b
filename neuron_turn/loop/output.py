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

A choice of output types (`[Refund, Escalation]`, `Refund | Escalation`: two or
more pydantic models, dataclasses or TypedDicts), as pydantic-ai's
`output_type=[...]`, is asked for as the model's choice: in `tool` mode one
final-answer tool per type (`final_answer_Refund`, `final_answer_Escalation`,
each with its type's schema and docstring), in `native` and `prompted` modes
`{"result": {"kind": "Refund", "data": {...}}}`. The custom block then names
the kind (`"kind": "Refund"`), so the value reads back as the type the model
chose, even where two types take the same fields. With `str` among the types
(`[Refund, str]`) a plain text answer is an answer too (`allows_text`, kind
`text`): no tool call is forced, and native output (JSON only) is not used.

An output function (`output_type=place_order`, or one of a choice) is asked for
by its arguments and answers with what it returns, once it has run
(`neuron_turn.loop.output_functions`); `TextOutput(function)` makes a plain
text answer the answer through a function; a choice may hold `OutputSpec`s,
each keeping its own name (its kind), description and tool name.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import types
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import lru_cache
from typing import (
    Any,
    Final,
    Generic,
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    overload,
    runtime_checkable,
)

from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
from typing_extensions import is_typeddict  # typing's misses typing_extensions.TypedDict

from layer0 import Content, CustomBlock, TextBlock, TurnOutput
from neuron_tool import StrictSchemaError, ToolInputError, ToolSchema
from neuron_tool.schema import InputValidator, InvalidSchemaError, json_schema_of
from neuron_tool.strict import strict_form as strict_tool_form

from ._nesting import MAX_INPUT_DEPTH, deeper_than
from .output_functions import (
    OutputCall,
    OutputFunction,
    TextFunction,
    TextOutput,
    is_output_function,
)

__all__ = [
    "FINAL_ANSWER_TOOL",
    "OUTPUT_CONTENT_TYPE",
    "TEXT_KIND",
    "EndStrategy",
    "OutputError",
    "OutputMissingError",
    "OutputMode",
    "OutputSchema",
    "OutputSpec",
    "OutputType",
    "OutputTypeError",
    "OutputValidationError",
    "SupportsOutputModes",
    "output_content",
    "output_kind",
    "output_value",
]

T = TypeVar("T")

OutputType: TypeAlias = Union[  # a generic alias: `X | Y` of strings is no type
    type[T],
    "OutputSpec[T]",
    TextOutput[T],
    Callable[..., Awaitable[T]],
    Callable[..., T],
    Sequence[Any],
]
"""What `output_type=` takes: a type, an `OutputSpec`, an output function (sync or async), a
`TextOutput`, or a list of them (and `str`) for the model to choose between."""

OutputMode: TypeAlias = Literal["native", "tool", "prompted"]
"""How the model is asked for a typed answer: the provider's JSON-schema output, a
forced `final_answer` tool, or the schema in the system prompt."""

EndStrategy: TypeAlias = Literal["early", "graceful"]
"""What becomes of the other tool calls an accepted final-answer call comes with: `early`
answers them unrun, `graceful` runs them (as pydantic-ai's `end_strategy`)."""

TEXT_KIND: Final = "text"
"""The kind of a plain text answer to a choice that takes text (`OutputSpec.allows_text`)."""
OUTPUT_CONTENT_TYPE: Final = "neuron.output"
"""The `content_type` of the custom block holding a turn's validated output."""
FINAL_ANSWER_TOOL: Final = "final_answer"
"""The default name of the tool the model answers through in `tool` mode."""

_WRAP_KEY: Final = "response"
_CHOICE_KEY: Final = "result"
_MAX_ERRORS: Final = 5
_NO_NATIVE_TEXT: Final = (
    "the output type {given!r} takes plain text, which native output (JSON only) cannot "
    "give: ask for it in tool or prompted mode"
)
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
        prompt_template: The instruction `prompted` mode adds to the system prompt, with
            `{schema}` where the schema's JSON goes; default: the loop's own.

    Raises:
        OutputTypeError: pydantic cannot build a JSON Schema for `output_type`, or
            `prompt_template` has no `{schema}`.
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
    """The tool the model answers through in `tool` mode (a choice: the start of each type's)."""
    members: tuple[OutputSpec[Any], ...]
    """A choice of output types: each type's own spec, answered through its own final-answer
    tool (`final_answer_Refund`; the one type beside `str`: `final_answer`); empty for one
    type."""
    allows_text: bool
    """Whether a plain text answer is an answer (`str` among a choice's types, as in
    pydantic-ai's `output_type=[Refund, str]`): the text itself, of kind `text`."""
    prompt_template: str | None = None
    """The instruction `prompted` mode adds to the system prompt, `{schema}` standing for
    the schema's JSON (as pydantic-ai's `PromptedOutput(template=...)`); None: the loop's."""
    value_type: Any
    """The Python type of the answer (an output function's return type); None: plain JSON."""
    text_function: TextFunction | None
    """The function a plain text answer goes through (`TextOutput`); None: text is the answer."""
    function: OutputFunction | None
    """The output function the model answers by calling (`neuron_turn.loop.output_functions`):
    the schema is its arguments', the answer what it returns; None for a type."""

    def __init__(
        self,
        output_type: type[T] | Any,
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool | None = None,
        mode: OutputMode | None = None,
        tool_name: str = FINAL_ANSWER_TOOL,
        prompt_template: str | None = None,
    ) -> None:
        self.prompt_template = _template(prompt_template)
        given = _items_of(output_type)
        if any(map(_composes, given)):
            self._composite(
                given, name=name, description=description, strict=strict, mode=mode,
                tool_name=tool_name,
            )  # fmt: skip
            return
        union = _union_of(output_type)
        try:
            adapter: TypeAdapter[T] = TypeAdapter(union)
            schema = json_schema_of(adapter, mode="validation")
        except (PydanticSchemaGenerationError, PydanticUserError) as exc:
            raise OutputTypeError(
                f"no JSON Schema for the output type {output_type!r}: {exc}"
            ) from exc
        self._adapter: TypeAdapter[T] | None = adapter
        self._validator: InputValidator | None = None
        choices, text = _record_choices(union)
        if text and mode == "native":
            raise OutputTypeError(_NO_NATIVE_TEXT.format(given=output_type))
        members: tuple[OutputSpec[Any], ...] = tuple(
            OutputSpec(
                choice,
                strict=strict,
                mode=mode,
                tool_name=tool_name
                if len(choices) == 1
                else _member_tool(tool_name, _type_name(choice)),
            )
            for choice in choices
        )
        _check_members(members)
        if len(members) > 1:
            schema = _choice_schema(members, choices)
        elif members:
            schema = members[0].schema
        self._setup(
            schema,
            name=name or _type_name(union),
            description=description if description is not None else _type_doc(union),
            strict=strict,
            mode=mode,
            tool_name=tool_name,
        )
        self.members = members
        self.allows_text = text
        self.value_type = union

    def _composite(
        self,
        given: tuple[Any, ...],
        *,
        name: str | None,
        description: str | None,
        strict: bool | None,
        mode: OutputMode | None,
        tool_name: str,
    ) -> None:
        """Set up a spec of output functions or specs, alone or in a choice with types and `str`."""
        texts = [item for item in given if item is str or isinstance(item, TextOutput)]
        if len(texts) > 1:
            raise OutputTypeError(
                f"the output types hold {texts!r}: give one way to take a text answer"
            )
        outputs = [item for item in texts if isinstance(item, TextOutput)]
        text_function = _text_function(outputs[0]) if outputs else None
        text = bool(texts)
        answers = tuple(item for item in given if item not in texts)
        if not answers:
            assert text_function is not None  # a list of only str is a union, not this way
            self._as_text_function(text_function, name=name, description=description, mode=mode)
            return
        for item in answers:
            if not (is_output_function(item) or _is_record(item) or isinstance(item, OutputSpec)):
                raise OutputTypeError(
                    f"{item!r} cannot be a choice beside an output function or spec: give "
                    "functions, OutputSpecs, pydantic models, dataclasses, TypedDicts and str"
                )
        if text and mode == "native":
            raise OutputTypeError(_NO_NATIVE_TEXT.format(given=list(given)))
        if len(answers) == 1 and not text and is_output_function(answers[0]):
            self._as_function(
                _compiled(answers[0]), name=name, description=description, strict=strict,
                mode=mode, tool_name=tool_name,
            )  # fmt: skip
            return
        if len(answers) == 1 and not text:
            raise OutputTypeError(
                "a list holding one OutputSpec: give the OutputSpec itself as the output type"
            )
        members = tuple(
            _member_of(
                item,
                strict=strict,
                mode=mode,
                tool_name=tool_name if len(answers) == 1 else None,
                choice_tool=tool_name,
            )
            for item in answers
        )
        _check_members(members)
        kinds = [member.value_type for member in members]
        if text:
            kinds.append(str if text_function is None else text_function.function.returns)
        answered: Any = None
        if all(kind is not None for kind in kinds):
            answered = Union[tuple(kinds)]  # noqa: UP007  # known only at run time
        # A raw schema among them: no Python type; a value is told apart by member.
        self._adapter = None if answered is None else TypeAdapter(answered)
        self._validator = None
        self._setup(
            members[0].schema if len(members) == 1 else _raw_choice_schema(members),
            name=name or "output",
            description=description,
            strict=strict,
            mode=mode,
            tool_name=tool_name,
        )
        self.members = members
        self.allows_text = text
        self.text_function = text_function
        self.value_type = answered

    def _as_text_function(
        self,
        text_function: TextFunction,
        *,
        name: str | None,
        description: str | None,
        mode: OutputMode | None,
    ) -> None:
        """Set up a `TextOutput` alone: every answer is text, made the answer by its function."""
        if mode == "native":
            raise OutputTypeError(_NO_NATIVE_TEXT.format(given=text_function.function.name))
        function = text_function.function
        self._adapter, self._validator = function.adapter, None
        self._setup(
            {"type": "string"},  # asked for by no tool and no prompt: the answer is text
            name=name or function.name,
            description=description if description is not None else function.description,
            strict=False,
            mode=mode,
            tool_name=FINAL_ANSWER_TOOL,
        )
        self.allows_text = True
        self.text_function = text_function
        self.value_type = function.returns

    def _as_function(
        self,
        function: OutputFunction,
        *,
        name: str | None,
        description: str | None,
        strict: bool | None,
        mode: OutputMode | None,
        tool_name: str,
    ) -> None:
        """Set up the spec of one output function: its arguments asked for, its result kept."""
        self._adapter, self._validator = function.adapter, None
        self._setup(
            function.schema,
            name=name or function.name,
            description=description if description is not None else function.description,
            strict=strict,
            mode=mode,
            tool_name=tool_name,
        )
        self.function = function
        self.value_type = function.returns

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
        prompt_template: str | None = None,
    ) -> OutputSpec[JsonValue]:
        """Return a spec for a raw JSON Schema (draft 2020-12); values are plain JSON.

        Raises:
            OutputTypeError: `schema` is not a valid JSON Schema, or `prompt_template` has
                no `{schema}`.
        """
        spec = cast(OutputSpec[JsonValue], cls.__new__(cls))
        spec.prompt_template = _template(prompt_template)
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

    @classmethod
    def json_schema_choice(
        cls,
        schemas: Mapping[str, Mapping[str, JsonValue]],
        *,
        name: str = "output",
        description: str | None = None,
        strict: bool | None = None,
        mode: OutputMode | None = None,
        tool_name: str = FINAL_ANSWER_TOOL,
        prompt_template: str | None = None,
    ) -> OutputSpec[JsonValue]:
        """Return a spec for a choice between raw JSON Schemas by kind, as `OutputSpec([A, B])`.

        Each schema (an object at its root) is answered through a final-answer
        tool of its own in `tool` mode (`final_answer_<kind>`), and the answer
        names its kind, as for a choice of types; values are plain JSON.

        Raises:
            OutputTypeError: fewer than two schemas, one not a valid JSON Schema or not
                an object at its root, kinds that clash, or `$defs` that disagree.
        """
        if len(schemas) < 2:
            raise OutputTypeError("a choice of schemas needs two or more of them")
        members: tuple[OutputSpec[Any], ...] = tuple(
            cls.json_schema(
                schema,
                name=kind,
                strict=strict,
                mode=mode,
                tool_name=_member_tool(tool_name, kind),
            )
            for kind, schema in schemas.items()
        )
        for member in members:
            if member.wrapped:
                raise OutputTypeError(
                    f"the choice's schema {member.name!r} must be an object at its root "
                    '({"type": "object", ...}): its kind\'s answer is that object'
                )
        _check_members(members)
        spec = cast(OutputSpec[JsonValue], cls.__new__(cls))
        spec.prompt_template = _template(prompt_template)
        spec._adapter = None
        spec._validator = None
        spec._setup(
            _raw_choice_schema(members),
            name=name,
            description=description,
            strict=strict,
            mode=mode,
            tool_name=tool_name,
        )
        spec.members = members
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
        if strict is None:
            # Inferred only where OpenAI takes the schema: past its limits a strict
            # request is refused, where the same request without strict would run.
            self.strict = strict_form is not None and _within_strict_limits(self.schema)
        else:
            self.strict = strict
        self._strict_schema = strict_form if strict_form is not None else self.schema
        self._strict_asked = strict
        self._tools: dict[bool, ToolSchema] = {}
        """The final-answer tool by whether the provider infers strict tools, made once."""
        self.mode = mode
        self.tool_name = tool_name
        self.members = ()
        self.allows_text = False
        self.function = None
        self.text_function = None
        self.value_type = None

    @property
    def text_only(self) -> bool:
        """Whether every answer is text (a `TextOutput` alone): no schema is asked for."""
        return self.allows_text and not self.members

    def __repr__(self) -> str:
        kinds = f", members={[m.name for m in self.members]!r}" if self.members else ""
        return f"OutputSpec(name={self.name!r}, mode={self.mode!r}{kinds})"

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
        if self.members:
            raise OutputTypeError(
                f"the output {self.name!r} is a choice of types, each answered through its "
                "own final-answer tool: see tool_schemas()"
            )
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

    def tool_schemas(self, *, infer_strict: bool = False) -> tuple[ToolSchema, ...]:
        """Return `tool` mode's final-answer tools: one, or one per type of a choice.

        A `TextOutput` alone has none: its answers are text.
        """
        if self.text_only:
            return ()
        if self.members:
            return tuple(m.tool_schema(infer_strict=infer_strict) for m in self.members)
        return (self.tool_schema(infer_strict=infer_strict),)

    def final_spec(self, tool: str) -> OutputSpec[Any] | None:
        """The spec a call to final-answer tool `tool` is validated by (None: no such tool)."""
        if self.text_only:
            return None  # its answers are text: a call named as a final answer is no answer
        if not self.members:
            return self if tool == self.tool_name else None
        return next((m for m in self.members if m.tool_name == tool), None)

    def kind_of(self, value: object) -> str | None:
        """The name of the type of a choice that `value` is (None: one type, or none fits).

        Why: a value a validator returned says its type only by what it is; the
        first type that takes it as it is (strict validation) names it.
        """
        if self.allows_text and isinstance(value, str):
            return TEXT_KIND
        return next((m.name for m in self.members if m._takes(value)), None)

    def _takes(self, value: object) -> bool:
        """Whether `value` is of this type as it is (strict: no coercion to tell types by)."""
        try:
            if self._adapter is not None:
                self._adapter.validate_python(value, strict=True)
            else:
                self.validate_value(value)
        except (ValidationError, OutputValidationError):
            return False
        return True

    def validate_stored(self, value: JsonValue, kind: JsonValue = None) -> T:
        """Validate a result as a turn output holds it (`output_value`): the value and its kind.

        A choice's value is validated as the type its kind names; without a
        kind, as the first type that takes it.

        Raises:
            OutputValidationError: it does not validate, or its kind names no type.
        """
        if self.members:
            if kind is None:
                return self.validate_value(value)
            if kind == TEXT_KIND and self.allows_text:
                return self._text(value)
            return cast(T, self._member(kind).validate_value(value))
        return self.validate_value(value)

    def _text(self, value: object) -> T:
        """A value of kind `text`: the text, or what a `TextOutput`'s function returns."""
        if self.text_function is not None:
            try:
                return cast(T, self.text_function.function.adapter.validate_python(value))
            except ValidationError as exc:
                raise OutputValidationError(_pydantic_errors(exc)) from exc
        if not isinstance(value, str):
            raise OutputValidationError(f"a text answer must be a string, not {value!r}")
        return cast(T, value)

    def text_answer(self, text: str) -> T:
        """A plain text answer: the text, or a `TextOutput`'s call to make of it.

        Raises:
            OutputValidationError: the text is not what the `TextOutput`'s function takes.
        """
        if self.text_function is None:
            return cast(T, text)
        try:
            return cast(T, self.text_function.answer(text, TEXT_KIND))
        except ValueError as exc:
            raise OutputValidationError(str(exc)) from exc

    def validate_text(self, text: str) -> T:
        """Validate a text answer: JSON, possibly in a code fence.

        Raises:
            OutputValidationError: not JSON, JSON nested deeper than a tool call's
                arguments may be (`MAX_INPUT_DEPTH`), or JSON that does not validate.
                A spec that takes plain text (`allows_text`) refuses only a JSON object
                that is none of its types: any other text is the answer as it is.
        """
        if not self.allows_text:
            return self.validate_json(_decoded(text))
        if self.text_only:
            return self.text_answer(text)
        try:
            value = _decoded(text)
        except OutputValidationError:
            return self.text_answer(text)
        return self.validate_json(value) if isinstance(value, dict) else self.text_answer(text)

    def validate_tool_result(self, text: str) -> T:
        """Validate a stop tool's result as the answer (`NeuronTurnConfig.stop_at_tools`).

        As `validate_text`, but a choice's result is a value of one of its types
        as the tool returned it, not the model's `{"result": {"kind": ...}}`; an
        output function's, a value of what it returns. Text a spec takes is a
        text answer: through a `TextOutput`'s function, an `OutputCall` to make.

        Raises:
            OutputValidationError: not JSON, or not a value of the output type.
        """
        if self.function is not None:
            return self.validate_value(_decoded(text))  # what the function would have returned
        if self.text_only:
            return self.text_answer(text)
        if not self.members:
            return self.validate_text(text)
        try:
            value = _decoded(text)
        except OutputValidationError:
            if self.allows_text:
                return self.text_answer(text)
            raise
        return self.validate_value(value)

    def validate_json(self, value: JsonValue) -> T:
        """Validate a decoded answer (unwrapping `{"response": ...}` for non-object types).

        An answer to an output function is an `OutputCall` to make, its arguments
        valid: the answer is what the call returns.

        Raises:
            OutputValidationError: the value does not validate.
        """
        if self.function is not None:
            try:
                return cast(T, self.function.answer(value, None))
            except ValueError as exc:
                raise OutputValidationError(str(exc)) from exc
        if self.allows_text and isinstance(value, str):
            return self.text_answer(value)
        if self.members:
            member, data = self._chosen(value)
            answer = member.validate_json(data)
            if isinstance(answer, OutputCall):
                return cast(T, answer.of_kind(member.name))
            return cast(T, answer)
        if self.wrapped:
            if not isinstance(value, dict) or _WRAP_KEY not in value:
                raise OutputValidationError(
                    f'the answer must be a JSON object {{"{_WRAP_KEY}": <value>}}'
                )
            value = value[_WRAP_KEY]
        return self.validate_value(value)

    def _chosen(self, value: JsonValue) -> tuple[OutputSpec[Any], JsonValue]:
        """The type a choice's answer names and its data.

        Raises:
            OutputValidationError: not `{"result": {"kind": ..., "data": ...}}`, or an
                unknown kind.
        """
        if len(self.members) == 1:  # one type beside text: its own schema, no kind to name
            return self.members[0], value
        result = value.get(_CHOICE_KEY) if isinstance(value, dict) else None
        if not isinstance(result, dict) or "kind" not in result or "data" not in result:
            kinds = " or ".join(repr(m.name) for m in self.members)
            raise OutputValidationError(
                f'the answer must be a JSON object {{"{_CHOICE_KEY}": {{"kind": <{kinds}>, '
                '"data": <the answer of that kind>}}'
            )
        return self._member(result["kind"]), result["data"]

    def _member(self, kind: JsonValue) -> OutputSpec[Any]:
        found = next((m for m in self.members if m.name == kind), None)
        if found is None:
            kinds = ", ".join(repr(m.name) for m in self.members)
            raise OutputValidationError(f"the kind {kind!r} is none of {kinds}")
        return found

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
        if self.members:  # a choice holding raw schemas: the first that takes the value
            if self.allows_text and isinstance(value, str):
                return cast(T, value)
            found = next((m for m in self.members if m._takes(value)), None)
            if found is None:
                kinds = ", ".join(repr(m.name) for m in self.members)
                raise OutputValidationError(f"the value is of none of the kinds {kinds}")
            return cast(T, value)
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
        if self.function is not None or self.text_only:
            raise OutputValidationError("an output function's answer is what it returns")
        if self.members:
            member, data = self._chosen(value)
            return cast(T, member.validate_partial(data))
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
            # Only a Python-typed member has a value to dump; raw schemas' values are JSON
            # already, so a choice of them validates nothing here (a streamed partial's path).
            typed = (m for m in self.members if m.value_type is not None and m._takes(value))
            taker = next(typed, None)
            return cast(JsonValue, value) if taker is None else taker.dump(value)
        return cast(JsonValue, self._adapter.dump_python(value, mode="json"))


def output_spec(
    output_type: OutputType[T] | Mapping[str, JsonValue],
) -> OutputSpec[Any]:
    """Return `output_type` as a spec: a spec as is, a mapping as a raw schema, else a type.

    A list of types is a choice (`[Refund, Escalation]`), as their union is.
    """
    if isinstance(output_type, OutputSpec):
        return output_type
    if isinstance(output_type, Mapping):
        return OutputSpec.json_schema(output_type)
    return OutputSpec(output_type)


def named_specs(
    given: Mapping[str, OutputType[Any] | Mapping[str, JsonValue]] | None,
) -> Mapping[str, OutputSpec[Any]]:
    """Return output types by name compiled (`NeuronTurn(named_output_types=...)`), read-only.

    Raises:
        OutputTypeError: a name is not a non-empty string, or a type cannot be an
            output type (the name says which).
    """
    if not given:
        return _NO_NAMED_SPECS
    specs: dict[str, OutputSpec[Any]] = {}
    for name, output_type in given.items():
        if not isinstance(name, str) or not name:
            raise OutputTypeError(f"an output type's name must be a non-empty string, not {name!r}")
        try:
            specs[name] = output_spec(output_type)
        except OutputTypeError as exc:
            raise OutputTypeError(f"output type {name!r}: {exc}") from exc
    return types.MappingProxyType(specs)


_NO_NAMED_SPECS: Final[Mapping[str, OutputSpec[Any]]] = types.MappingProxyType({})


def output_content(spec: OutputSpec[Any], value: JsonValue, kind: str | None = None) -> Content:
    """Return the output message for a validated value (see the module docstring).

    `kind` names the type of a choice the value is.
    """
    if kind == TEXT_KIND and isinstance(value, str):
        text = value  # a plain text answer reads as itself, not as a JSON string
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    data: dict[str, JsonValue] = {"name": spec.name, "value": value}
    if kind is not None:
        data["kind"] = kind
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
    value, kind = _stored(output)
    if output_type is None:
        return value
    if isinstance(output_type, OutputSpec):
        return output_type.validate_stored(value, kind)
    spec = _cached_spec(tuple(output_type) if isinstance(output_type, list) else output_type)
    return spec.validate_stored(value, kind)


def output_kind(output: TurnOutput) -> str | None:
    """The kind of a choice's answer a turn output names (`"Refund"`, `"text"`), else None.

    Raises:
        OutputMissingError: the turn did not end with a validated result.
    """
    kind = _stored(output)[1]
    return kind if isinstance(kind, str) else None


def _stored(output: TurnOutput) -> tuple[JsonValue, JsonValue]:
    """The result a turn output holds, and the kind it names (None: not a choice's)."""
    blocks = output.message.root
    if not isinstance(blocks, str):
        for block in blocks:
            if isinstance(block, CustomBlock) and block.content_type == OUTPUT_CONTENT_TYPE:
                data = block.data
                if isinstance(data, dict) and "value" in data:
                    return data["value"], data.get("kind")
    raise OutputMissingError(
        f"the turn output holds no validated result (exit reason: {output.exit_reason!r})"
    )


@lru_cache(maxsize=64)
def _cached_spec(output_type: Any) -> OutputSpec[Any]:
    return OutputSpec(output_type)


def _template(template: str | None) -> str | None:
    """`template`, once it is seen to have a place for the schema."""
    if template is not None and "{schema}" not in template:
        raise OutputTypeError(
            f"the prompt template {template[:80]!r} has no {{schema}}: the model would not "
            "see what to answer"
        )
    return template


def _items_of(output_type: Any) -> tuple[Any, ...]:
    """The types or functions given: a list's or tuple's items, else the one given."""
    return tuple(output_type) if isinstance(output_type, list | tuple) else (output_type,)


def _composes(item: object) -> bool:
    """Whether `item` makes a list a choice of its own kinds, not a union of types."""
    return isinstance(item, OutputSpec | TextOutput) or is_output_function(item)


def _text_function(output: TextOutput[Any]) -> TextFunction:
    try:
        return TextFunction(output)
    except ValueError as exc:
        raise OutputTypeError(str(exc)) from exc


def _compiled(function: Any) -> OutputFunction:
    try:
        return OutputFunction(function)
    except ValueError as exc:
        raise OutputTypeError(str(exc)) from exc


def _member_of(
    item: Any,
    *,
    strict: bool | None,
    mode: OutputMode | None,
    tool_name: str | None,
    choice_tool: str,
) -> OutputSpec[Any]:
    """One function's or type's spec in a choice.

    It answers through `tool_name` if given, else through a final-answer tool of
    its own (`final_answer_<its name>`).
    """
    if isinstance(item, OutputSpec):
        return _member_spec(item, mode=mode, tool_name=tool_name, choice_tool=choice_tool)
    if not is_output_function(item):
        own = tool_name or _member_tool(choice_tool, _type_name(item))
        return OutputSpec(item, strict=strict, mode=mode, tool_name=own)
    function = _compiled(item)
    member: OutputSpec[Any] = OutputSpec.__new__(OutputSpec)
    member._as_function(
        function, name=None, description=None, strict=strict, mode=mode,
        tool_name=tool_name or _member_tool(choice_tool, function.name),
    )  # fmt: skip
    return member


def _member_spec(
    spec: OutputSpec[Any], *, mode: OutputMode | None, tool_name: str | None, choice_tool: str
) -> OutputSpec[Any]:
    """A spec given in a choice, as pydantic-ai's `ToolOutput(Fruit, name=...)`.

    It keeps its own name (the kind), description, strictness and tool name
    (`final_answer_<name>` unless it set one).
    """
    if spec.members or spec.allows_text:
        raise OutputTypeError(
            f"the OutputSpec {spec.name!r} is itself a choice: list its types in the choice"
        )
    member = copy.copy(spec)
    member.mode = mode
    if tool_name is not None:
        member.tool_name = tool_name
    elif spec.tool_name == FINAL_ANSWER_TOOL:
        member.tool_name = _member_tool(choice_tool, spec.name)
    member._tools = {}  # made again under the tool name it answers through here
    return member


def _union_of(output_type: Any) -> Any:
    """`output_type`, a list or tuple of types as their union (`[A, B]` is `A | B`)."""
    if not isinstance(output_type, list | tuple):
        return output_type
    if not output_type:
        raise OutputTypeError("an empty list of output types: give at least one")
    return Union[tuple(output_type)]  # noqa: UP007  # a union of types known only at run time


def _record_choices(union: Any) -> tuple[tuple[type[Any], ...], bool]:
    """A union's types to choose between, and whether text answers too; `((), False)`: none.

    A choice is two or more pydantic models, dataclasses or TypedDicts (each has an
    object schema of its own, so each can be a tool's input), or one or more of them
    beside `str` (text then is an answer). A union holding any other type (`int | str`,
    `Refund | None`) is asked for whole, as one type.
    """
    if get_origin(union) not in (Union, types.UnionType):
        return (), False
    given = get_args(union)
    records = tuple(member for member in given if member is not str)
    text = len(records) < len(given)
    if records and all(map(_is_record, records)) and (len(records) > 1 or text):
        return records, text
    return (), False


def _is_record(member: object) -> bool:
    return isinstance(member, type) and (
        issubclass(member, BaseModel) or dataclasses.is_dataclass(member) or is_typeddict(member)
    )


def _check_members(members: tuple[OutputSpec[Any], ...]) -> None:
    """Refuse a choice whose types' names clash: the model names its choice by them."""
    seen: dict[str, str] = {}
    for member in members:
        for label, key in (("name", member.name), ("final-answer tool", member.tool_name)):
            if key in seen:
                raise OutputTypeError(
                    f"two output types of the choice have the {label} {key!r}; give the "
                    "choice types of other names (the model names its choice by them)"
                )
            seen[key] = label


def _member_tool(tool_name: str, kind: str) -> str:
    """The final-answer tool of one type of a choice: `final_answer_Refund`."""
    return _NAME_CHARS.sub("_", f"{tool_name}_{kind}")[:64]


def _choice_schema(
    members: tuple[OutputSpec[Any], ...], choices: tuple[type[Any], ...]
) -> dict[str, JsonValue]:
    """The schema of a choice's answer in `native` and `prompted` modes, as pydantic-ai's.

    `{"result": {"kind": <a type's name>, "data": <an answer of that type>}}`, one
    `anyOf` branch per type, so the answer names the type it is.
    """
    adapter: TypeAdapter[Any] = TypeAdapter(tuple[choices])  # type: ignore[valid-type]
    joint = json_schema_of(adapter, mode="validation")  # one set of $defs for all the types
    items = joint.get("prefixItems")
    assert isinstance(items, list) and len(items) == len(members)
    defs = joint.get("$defs")
    return _choice_of(members, items, defs if isinstance(defs, dict) else {})


def _raw_choice_schema(members: tuple[OutputSpec[Any], ...]) -> dict[str, JsonValue]:
    """The choice schema of raw JSON Schemas: each its own data, their `$defs` merged.

    Raises:
        OutputTypeError: two schemas define one name differently.
    """
    defs: dict[str, JsonValue] = {}
    datas: list[JsonValue] = []
    for member in members:
        data = dict(member.schema)
        own = data.pop("$defs", None)
        for key, value in own.items() if isinstance(own, dict) else ():
            if key in defs and defs[key] != value:
                raise OutputTypeError(
                    f"the choice's schemas define {key!r} differently under $defs; give "
                    "one of them another name"
                )
            defs[key] = value
        datas.append(data)
    return _choice_of(members, datas, defs)


def _choice_of(
    members: tuple[OutputSpec[Any], ...], datas: list[JsonValue], defs: dict[str, JsonValue]
) -> dict[str, JsonValue]:
    branches: list[JsonValue] = [
        _branch(member, data) for member, data in zip(members, datas, strict=True)
    ]
    schema: dict[str, JsonValue] = {
        "type": "object",
        "properties": {_CHOICE_KEY: {"anyOf": branches}},
        "required": [_CHOICE_KEY],
        "additionalProperties": False,
    }
    if defs:
        schema["$defs"] = defs
    return schema


def _branch(member: OutputSpec[Any], data: JsonValue) -> JsonValue:
    """One type's branch of a choice's schema, described as its type is, to choose by."""
    branch: dict[str, JsonValue] = {
        "type": "object",
        "properties": {"kind": {"type": "string", "enum": [member.name]}, "data": data},
        "required": ["kind", "data"],
        "additionalProperties": False,
    }
    if member.description:
        branch["description"] = member.description
    return branch


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


_MOST_PROPERTIES: Final = 5000
_MOST_OBJECT_DEPTH: Final = 10
_MOST_NAME_CHARS: Final = 120_000
_MOST_ENUM_VALUES: Final = 1000
_LONG_ENUM: Final = 250
_MOST_LONG_ENUM_CHARS: Final = 15_000


def _within_strict_limits(schema: JsonValue) -> bool:
    """Whether `schema` is within the limits OpenAI sets on a strict schema.

    At most 5,000 object properties, objects nested 10 deep, 120,000 characters of
    property names, definition names, enum and const values together, 1,000 enum
    values, and 15,000 characters of the values of an enum of more than 250 strings.
    Walked without recursion; a `$ref` counts where it is, its definition on its own.
    """
    properties = chars = enums = 0
    pending: list[tuple[JsonValue, int]] = [(schema, 0)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, list):
            pending.extend((item, depth) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        named = node.get("properties")
        if isinstance(named, dict) or node.get("type") == "object":
            depth += 1
            if depth > _MOST_OBJECT_DEPTH:
                return False
        if isinstance(named, dict):
            properties += len(named)
            chars += sum(map(len, named))
        defs = node.get("$defs")
        if isinstance(defs, dict):
            chars += sum(map(len, defs))
        values = node.get("enum")
        if isinstance(values, list):
            enums += len(values)
            texts = [str(value) for value in values]
            chars += sum(map(len, texts))
            strings = sum(len(v) for v in values if isinstance(v, str))
            if len(values) > _LONG_ENUM and strings > _MOST_LONG_ENUM_CHARS:
                return False
        if "const" in node:
            chars += len(str(node["const"]))
        if properties > _MOST_PROPERTIES or chars > _MOST_NAME_CHARS or enums > _MOST_ENUM_VALUES:
            return False
        pending.extend((value, 0 if key == "$defs" else depth) for key, value in node.items())
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


def _decoded(text: str) -> JsonValue:
    """A text answer's JSON: possibly in a code fence or after a line of prose.

    Raises:
        OutputValidationError: not JSON, or nested deeper than a tool call's arguments
            may be (`MAX_INPUT_DEPTH`).
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
    return value


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
