from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError

from neuron_tool import ToolInputError, ToolSchema
from neuron_tool.schema import (
    InputValidator,
    InvalidSchemaError,
    json_schema_of,
    model_json_schema,
)

ORDER_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
        "note": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]},
    },
    "required": ["items"],
}


class Point(BaseModel):
    x: int
    y: int = 0


def test_tool_schema_is_frozen() -> None:
    schema = ToolSchema(name="a", description="d", input_schema={"type": "object"})
    with pytest.raises(ValidationError):
        schema.name = "b"  # type: ignore[misc]


def test_tool_schema_round_trips_through_json() -> None:
    schema = ToolSchema(name="a", description="d", input_schema=ORDER_SCHEMA)
    assert ToolSchema.model_validate_json(schema.model_dump_json()) == schema


def test_validator_refuses_a_schema_that_breaks_the_metaschema() -> None:
    with pytest.raises(InvalidSchemaError, match="objekt"):
        InputValidator({"type": "objekt"})


def test_valid_input_passes() -> None:
    InputValidator(ORDER_SCHEMA).check("order", {"items": [{"name": "a"}], "note": None})


def test_error_reports_json_path_of_the_bad_value() -> None:
    validator = InputValidator(ORDER_SCHEMA)
    bad: JsonValue = {"items": [{"name": "a"}, {"name": "b"}, {"name": 7}]}
    with pytest.raises(ToolInputError) as caught:
        validator.check("order", bad)
    assert caught.value.tool == "order"
    assert caught.value.path == "$.items[2].name"
    assert caught.value.message == "7 is not of type 'string'"


def test_missing_property_is_reported_at_its_parent_object() -> None:
    with pytest.raises(ToolInputError) as caught:
        InputValidator(ORDER_SCHEMA).check("order", {"items": [{}]})
    assert caught.value.path == "$.items[0]"
    assert caught.value.message == "'name' is a required property"


def test_any_of_failure_reports_the_most_specific_branch() -> None:
    with pytest.raises(ToolInputError) as caught:
        InputValidator(ORDER_SCHEMA).check("order", {"items": [], "note": "too long"})
    assert caught.value.path == "$.note"
    assert "is too long" in caught.value.message


def test_model_schema_has_no_pydantic_titles() -> None:
    schema = model_json_schema(Point)
    assert "title" not in schema
    assert schema["properties"] == {
        "x": {"type": "integer"},
        "y": {"default": 0, "type": "integer"},
    }


def test_type_schema_has_no_top_level_title() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(list[Point])
    schema = json_schema_of(adapter, mode="serialization")
    assert "title" not in schema
    assert schema["type"] == "array"
