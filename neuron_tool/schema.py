"""JSON Schema for tools: the provider-facing `ToolSchema`, schema generation and validation."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Final, NoReturn

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode

from ._json_path import json_path
from .errors import ToolInputError

if TYPE_CHECKING:
    import jsonschema_rs


class ToolSchema(BaseModel):
    """What a provider request carries about one tool: its name, purpose and input schema."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    # Field descriptions, not attribute docstrings: see `ToolAnnotations`.
    name: str = Field(description="The name the model calls the tool by.")
    description: str = Field(
        description="What the tool does, for the model to decide when to call it."
    )
    input_schema: dict[str, JsonValue] = Field(
        description="The JSON Schema (draft 2020-12) the tool's input must match."
    )
    strict: bool | None = Field(
        None,
        description=(
            "True: the provider constrains the model's input to the schema as it is "
            "decoded (strict mode), and a provider without it refuses the turn; False or "
            "None: not asked (the input is checked against the schema either way)."
        ),
    )


class _ToolJsonSchema(GenerateJsonSchema):
    """Pydantic's schema generator without per-field titles: they repeat the name for the model."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def json_schema_of(adapter: TypeAdapter[Any], *, mode: JsonSchemaMode) -> dict[str, JsonValue]:
    """Return the JSON Schema of `adapter`'s type, without the titles pydantic invents."""
    schema: dict[str, JsonValue] = adapter.json_schema(mode=mode, schema_generator=_ToolJsonSchema)
    schema.pop("title", None)
    return schema


def model_json_schema(model: type[BaseModel]) -> dict[str, JsonValue]:
    """Return the validation JSON Schema of `model`, without the titles pydantic invents."""
    schema: dict[str, JsonValue] = model.model_json_schema(schema_generator=_ToolJsonSchema)
    schema.pop("title", None)
    return schema


class InvalidSchemaError(ValueError):
    """A tool's input schema is not a valid draft 2020-12 JSON Schema."""


def _raise_invalid_schema(
    schema: dict[str, JsonValue], error: jsonschema_rs.ValidationError
) -> NoReturn:
    """Raise `InvalidSchemaError` in jsonschema's words (its best metaschema error), else rs's."""
    import jsonschema_rs
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise InvalidSchemaError(exc.message) from exc
    # A problem only jsonschema-rs sees, such as a `$ref` to nothing or to anything outside
    # the schema. Its first line says what; the rest describes an instance there is none of.
    reason = str(error).split("\n", 1)[0]
    if isinstance(error.kind, jsonschema_rs.ValidationErrorKind.Referencing):
        reason += " (a $ref must resolve within the schema: nothing is fetched)"
    raise InvalidSchemaError(reason) from error


class InputValidator:
    """A tool's input schema compiled once, checked on every call.

    Compiling at registration keeps schema parsing off the call path; only the
    validation itself runs per call.
    """

    __slots__ = ("_explainer", "_fast", "_schema")

    def __init__(self, schema: dict[str, JsonValue]) -> None:
        """Check `schema` against the draft 2020-12 metaschema and compile it, offline.

        Nothing outside `schema` is fetched or read: a `$ref` resolves within it
        (or to a metaschema) or the schema is refused.

        Raises:
            InvalidSchemaError: `schema` is not a valid JSON Schema, or has a `$ref`
                that does not resolve within it.
        """
        # Imported with the first schema, not with neuron_tool: a 15 MB extension that
        # keeps ~5 MB resident, which a turn without tools never needs.
        import jsonschema_rs

        try:
            # jsonschema-rs checks the schema against the metaschema as it compiles it,
            # and decides an input's validity in well under a microsecond. Offline: by
            # default it fetches a `$ref`'s http(s) URL or reads its file:// path, which
            # a schema from an untrusted peer (an MCP server's tool) would point anywhere.
            self._fast: Final = jsonschema_rs.Draft202012Validator(schema, offline=True)
        except jsonschema_rs.ValidationError as exc:
            _raise_invalid_schema(schema, exc)
        self._schema: Final = schema
        # jsonschema (~40 ms and ~5 MB to import) only words the errors: built on the first one.
        self._explainer: Any = None

    def check(self, tool: str, input: JsonValue) -> None:
        """Raise `ToolInputError` with the path and message of the best error, if any."""
        if self._fast.is_valid(input):
            return
        if self._explainer is None:
            from jsonschema import Draft202012Validator
            from referencing import Registry

            # An empty registry, not jsonschema's default, which fetches remote `$ref`s.
            self._explainer = Draft202012Validator(self._schema, registry=Registry())
        errors = self._explainer.iter_errors(input)
        first = next(errors, None)
        if first is None:
            # The two libraries disagree: the fast one is the arbiter; use its words.
            self._raise_fast_error(tool, input)
        # best_match prefers the shallowest error and descends into anyOf/oneOf,
        # which reads better to a model than whichever error came first.
        from jsonschema.exceptions import best_match

        error = best_match(itertools.chain((first,), errors)) or first
        raise ToolInputError(tool, json_path(error.absolute_path), error.message)

    def _raise_fast_error(self, tool: str, input: JsonValue) -> NoReturn:
        import jsonschema_rs  # loaded already: this validator was compiled with it

        try:
            self._fast.validate(input)
        except jsonschema_rs.ValidationError as exc:
            raise ToolInputError(tool, json_path(exc.instance_path), exc.message) from None
        raise AssertionError("jsonschema-rs reported an invalid input it then accepted")
