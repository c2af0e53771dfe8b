"""`strict_form`: a tool's input schema in OpenAI's strict subset, and the model's input back."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, JsonValue

from neuron_tool import (
    StrictSchemaError,
    ToolInputError,
    ToolRegistrationError,
    ToolRegistry,
    ToolSchema,
    strict_form,
    tool,
)
from neuron_tool.schema import InputValidator
from tests.layer0.strategies import json_values

from .shaped import ShapedTool


class Address(BaseModel):
    city: str
    zip_code: str | None = None
    floor: int = 0


class Click(BaseModel):
    kind: Literal["click"]
    x: int = 0


class Type(BaseModel):
    kind: Literal["type"]
    text: str = ""


class Tree(BaseModel):
    label: str
    note: str = ""
    children: list[Tree] = []


@tool(strict=True)
def book(
    name: str,
    seats: int = 2,
    address: Address | None = None,
    tags: list[str] = [],  # noqa: B006 - pydantic copies defaults
    action: Click | Type | None = None,
) -> str:
    """Book a table.

    Args:
        name: Whose booking.
        seats: How many seats.
    """
    return name


def _objects(node: JsonValue) -> list[dict[str, JsonValue]]:
    """Every object schema in `node`, nested ones included."""
    found: list[dict[str, JsonValue]] = []
    if isinstance(node, list):
        for item in node:
            found += _objects(item)
    elif isinstance(node, dict):
        if "properties" in node:
            found.append(node)
        for value in node.values():
            found += _objects(value)
    return found


def test_every_object_is_closed_and_lists_all_its_properties_as_required() -> None:
    schema = strict_form(book.input_schema, tool="book").schema

    objects = _objects(schema)
    assert len(objects) == 4  # the arguments, Address, Click, Type
    for node in objects:
        properties = node["properties"]
        assert isinstance(properties, dict)
        assert node["required"] == list(properties)
        assert node["additionalProperties"] is False


def test_an_optional_parameter_becomes_required_and_nullable_and_says_null_is_its_default() -> None:
    seats = strict_form(book.input_schema, tool="book").schema["properties"]["seats"]  # type: ignore[call-overload,index]

    assert seats["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    assert seats["description"] == "How many seats.\n\n{default: 2} (null: the default)"
    assert "default" not in str(seats["anyOf"])


def test_a_parameter_that_takes_null_already_is_not_wrapped_again() -> None:
    address = strict_form(book.input_schema, tool="book").schema["properties"]["address"]  # type: ignore[call-overload,index]

    assert address["anyOf"] == [{"$ref": "#/$defs/Address"}, {"type": "null"}]


def test_restore_drops_the_nulls_sent_for_optional_properties_at_every_depth() -> None:
    form = strict_form(book.input_schema, tool="book")
    sent: JsonValue = {
        "name": "Ana",
        "seats": None,
        "address": {"city": "Lyon", "zip_code": None, "floor": None},
        "tags": None,
        "action": {"kind": "type", "text": None},
    }

    restored = form.restore(sent)

    assert restored == {
        "name": "Ana",
        "address": {"city": "Lyon", "zip_code": None},
        "action": {"kind": "type"},
    }
    assert sent["seats"] is None  # the model's input is not changed in place
    InputValidator(book.input_schema).check("book", restored)


def test_restore_keeps_a_null_the_tool_itself_takes() -> None:
    form = strict_form(book.input_schema, tool="book")

    restored = form.restore(
        {"name": "Ana", "seats": 3, "address": None, "tags": [], "action": None}
    )

    assert restored == {"name": "Ana", "seats": 3, "address": None, "tags": [], "action": None}


def test_a_discriminated_union_restores_by_its_tag() -> None:
    form = strict_form(book.input_schema, tool="book")

    click = form.restore({"name": "A", "action": {"kind": "click", "x": None}})
    typed = form.restore({"name": "A", "action": {"kind": "type", "text": None}})

    assert click == {"name": "A", "action": {"kind": "click"}}
    assert typed == {"name": "A", "action": {"kind": "type"}}


def test_a_recursive_model_restores_at_every_level() -> None:
    @tool(strict=True)
    def plant(tree: Tree) -> str:
        """Plant a tree."""
        return tree.label

    form = strict_form(plant.input_schema, tool="plant")
    leaf: JsonValue = {"label": "leaf", "note": None, "children": None}

    restored = form.restore({"tree": {"label": "root", "note": None, "children": [leaf]}})

    assert restored == {"tree": {"label": "root", "children": [{"label": "leaf"}]}}


def test_restore_leaves_a_value_of_another_shape_for_the_registry_to_name() -> None:
    form = strict_form(book.input_schema, tool="book")

    assert form.restore(["not", "an", "object"]) == ["not", "an", "object"]
    assert form.restore({"name": "A", "address": "Lyon"}) == {"name": "A", "address": "Lyon"}


def test_keywords_the_subset_lacks_are_described_and_the_ones_it_has_are_kept() -> None:
    def find(
        code: Annotated[str, Field(min_length=3, pattern="^[A-Z]+$")],
        when: Annotated[str, Field(json_schema_extra={"format": "date"})],
        url: Annotated[str, Field(json_schema_extra={"format": "uri"})],
        top: Annotated[int, Field(ge=1, le=9)],
        ids: Annotated[list[int], Field(max_length=4)],
    ) -> None:
        """Find."""

    schema = strict_form(tool(strict=True)(find).input_schema, tool="find").schema
    properties: Any = schema["properties"]

    assert properties["code"] == {
        "type": "string",
        "pattern": "^[A-Z]+$",
        "description": "{minLength: 3}",
    }
    assert properties["when"] == {"type": "string", "format": "date"}
    assert properties["url"] == {"type": "string", "description": '{format: "uri"}'}
    assert properties["top"] == {"type": "integer", "minimum": 1, "maximum": 9}
    assert properties["ids"] == {"type": "array", "items": {"type": "integer"}, "maxItems": 4}


def test_a_ref_with_a_description_beside_it_moves_into_an_any_of_of_one() -> None:
    def send(to: Address) -> None:
        """Send.

        Args:
            to: Where to send.
        """

    schema = strict_form(tool(send).input_schema, tool="send").schema

    assert schema["properties"] == {
        "to": {"anyOf": [{"$ref": "#/$defs/Address"}], "description": "Where to send."}
    }


def test_one_of_becomes_any_of_and_the_discriminator_hint_is_dropped() -> None:
    def act(
        action: Annotated[Click | Type, Field(discriminator="kind")],
    ) -> None:
        """Act."""

    schema = strict_form(tool(act).input_schema, tool="act").schema
    action: Any = schema["properties"]

    assert set(action["action"]) == {"anyOf"}
    assert action["action"]["anyOf"] == [{"$ref": "#/$defs/Click"}, {"$ref": "#/$defs/Type"}]


@pytest.mark.parametrize(
    ("schema", "path", "why"),
    [
        (
            {"type": "object", "properties": {"counts": {"type": "object"}}},
            "$.counts",
            "is an object of free keys",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "counts": {"type": "object", "additionalProperties": {"type": "integer"}}
                },
            },
            "$.counts",
            "is an object of free keys",
        ),
        (
            {"type": "object", "properties": {"pair": {"type": "array", "prefixItems": []}}},
            "$.pair",
            "is a tuple",
        ),
        (
            {"type": "object", "properties": {"x": {"not": {"type": "null"}}}},
            "$.x",
            "uses not",
        ),
        (
            {"type": "object", "properties": {"x": {"allOf": [{"type": "string"}, {}]}}},
            "$.x",
            "uses allOf of more than one schema",
        ),
        (
            {"type": "object", "properties": {"x": {"$ref": "https://example.com/x"}}},
            "$.x",
            "refers to 'https://example.com/x'",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "x": {
                        "anyOf": [
                            {"type": "object", "properties": {"a": {"type": "string"}}},
                            {"type": "object", "properties": {"b": {"type": "string"}}},
                        ]
                    }
                },
            },
            "$.x",
            "is a union of objects (or arrays) with optional properties",
        ),
        ({"type": "string"}, "$", "is not an object schema"),
    ],
    ids=["free-keys", "free-keys-typed", "tuple", "not", "all-of", "remote-ref", "union", "root"],
)
def test_a_schema_with_no_strict_form_is_refused_naming_where_and_why(
    schema: dict[str, JsonValue], path: str, why: str
) -> None:
    with pytest.raises(StrictSchemaError) as caught:
        strict_form(schema, tool="t")

    assert caught.value.tool == "t"
    assert caught.value.path == path
    assert why in caught.value.reason
    assert str(caught.value).startswith(f"tool 't' cannot be strict: its input schema at {path}")
    assert "strict=False" in str(caught.value)


def test_a_schema_nested_past_what_any_api_takes_is_refused_not_a_crash() -> None:
    node: dict[str, JsonValue] = {"type": "string"}
    for _ in range(5000):
        node = {"type": "array", "items": node}

    with pytest.raises(StrictSchemaError, match="nests deeper than 100 levels"):
        strict_form({"type": "object", "properties": {"deep": node}}, tool="t")


def test_a_chain_of_lone_all_ofs_is_merged_whatever_its_depth() -> None:
    node: dict[str, JsonValue] = {"type": "string", "minLength": 2}
    for _ in range(5000):
        node = {"allOf": [node]}

    schema = strict_form(
        {"type": "object", "properties": {"x": node}, "required": ["x"]}, tool="t"
    ).schema

    assert schema["properties"] == {"x": {"type": "string", "description": "{minLength: 2}"}}


def test_a_union_of_objects_without_optional_properties_needs_no_tag() -> None:
    schema: dict[str, JsonValue] = {
        "type": "object",
        "properties": {
            "x": {
                "anyOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]},
                ]
            }
        },
        "required": ["x"],
    }

    form = strict_form(schema, tool="t")

    assert form.restore({"x": {"a": None}}) == {"x": {"a": None}}


def test_strict_form_never_changes_the_schema_it_is_given() -> None:
    before = repr(book.input_schema)

    strict_form(book.input_schema, tool="book")

    assert repr(book.input_schema) == before


def test_the_registry_carries_a_tools_strict_setting_to_its_schema() -> None:
    @tool
    def plain() -> None:
        """Plain."""

    registry = ToolRegistry([book, plain])

    assert [s.strict for s in registry.schemas()] == [True, None]


def test_a_tool_whose_strict_is_not_a_bool_is_refused_at_registration() -> None:
    with pytest.raises(
        ToolRegistrationError, match=r"strict must be True, False or None; got 'yes'"
    ):
        ToolRegistry([ShapedTool(strict="yes")])


def test_tool_schema_strict_is_unset_unless_given() -> None:
    schema = ToolSchema(name="t", description="d", input_schema={"type": "object"})

    assert schema.strict is None
    assert schema.model_copy(update={"description": "e"}).strict is None


_BOOK_FORM = strict_form(book.input_schema, tool="book")
_ARGUMENTS = st.fixed_dictionaries(
    {},
    optional={
        key: st.one_of(st.none(), json_values)
        for key in ("name", "seats", "address", "tags", "action")
    },
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(json_values, _ARGUMENTS))
def test_any_input_a_model_sends_a_strict_tool_is_restored_without_crashing_or_changing_it(
    sent: Any,
) -> None:
    before = repr(sent)

    restored = _BOOK_FORM.restore(sent)

    assert repr(sent) == before
    if isinstance(sent, dict):
        assert isinstance(restored, dict)
        dropped = set(sent) - set(restored)
        assert all(sent[key] is None for key in dropped)
        assert dropped <= {"seats", "tags"}  # optional, and not taking null themselves
    try:
        InputValidator(book.input_schema).check("book", restored)
    except ToolInputError:
        pass  # the registry's check names what is wrong, as for any tool


def test_a_schemas_form_is_written_once_and_a_new_schema_gets_its_own() -> None:
    schema = ToolRegistry([book]).schemas()[0]
    changed = schema.model_copy(
        update={"input_schema": {**schema.input_schema, "required": ["name", "seats"]}}
    )

    first = strict_form(schema.input_schema, tool="book")

    assert strict_form(schema.input_schema, tool="book") is first
    assert strict_form(schema.input_schema, tool="other") is not first
    assert strict_form(changed.input_schema, tool="book").restore({"seats": None}) == {
        "seats": None
    }


_SCHEMA_KEYS = st.sampled_from(
    [
        "type", "properties", "required", "additionalProperties", "items", "anyOf", "oneOf",
        "allOf", "$ref", "$defs", "enum", "const", "default", "description", "format",
        "prefixItems", "not", "minLength",
    ]
)  # fmt: skip
_SCHEMAS: st.SearchStrategy[Any] = st.recursive(
    json_values,
    lambda children: (
        st.dictionaries(_SCHEMA_KEYS | st.text(max_size=4), children, max_size=5)
        | st.lists(children, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_SCHEMA_KEYS, _SCHEMAS, max_size=6), json_values)
@example({"properties": {"x": {"format": []}}}, None)  # crashed: found by this test
@example({"properties": {"x": {}}, "required": [[]]}, None)  # crashed: found by this test
def test_any_schema_has_a_strict_form_or_is_refused_and_its_restore_never_crashes(
    schema: dict[str, Any], sent: Any
) -> None:
    # An MCP server's schema is untrusted: nothing but StrictSchemaError may come out.
    try:
        form = strict_form({"type": "object", **schema}, tool="t")
    except StrictSchemaError as exc:
        assert exc.path.startswith("$") and exc.reason
        return
    json.dumps(form.schema)
    form.restore(sent)
