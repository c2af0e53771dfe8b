"""The values SchemaProvider makes up: each one accepted by the schema it came from."""

from __future__ import annotations

import datetime
import uuid
from enum import Enum
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field, TypeAdapter

from neuron_turn.loop._schema_values import value_for


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Everything(BaseModel):
    short: Annotated[str, Field(min_length=5, max_length=8)]
    count: Annotated[int, Field(gt=10, lt=12)]
    share: Annotated[float, Field(gt=0, lt=1)]
    negative: Annotated[int, Field(le=-3)]
    when: datetime.datetime
    day: datetime.date
    ident: uuid.UUID
    colour: Colour
    mode: Literal["fast", "slow"]
    pair: tuple[int, str]
    mapping: dict[str, int]
    maybe: int | None
    either: int | str
    tree: Node
    many: Annotated[list[int], Field(min_length=3)]
    flag: bool
    fixed: Literal[7] = 7


@pytest.mark.parametrize(
    "type_",
    [Everything, Node, int, str, list[Everything], dict[str, Node], Colour, bool, float],
    ids=lambda t: getattr(t, "__name__", str(t)),
)
def test_a_value_made_from_a_pydantic_schema_validates_as_its_type(type_: Any) -> None:
    adapter = TypeAdapter(type_)
    schema = adapter.json_schema()
    value = value_for(schema)
    jsonschema.validate(value, schema)
    adapter.validate_python(value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 2},
        {"type": "number", "minimum": 2.5, "maximum": 3},
        {"type": "string", "format": "email"},
        {"type": ["null", "string"], "minLength": 2},
        {"type": "array", "items": {"type": "integer"}, "maxItems": 0},
        {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/X"}], "$defs": {"X": {"type": "boolean"}}},
        {"allOf": [{"type": "integer", "minimum": 4}]},
        {"const": {"k": [1]}},
        {},
    ],
)
def test_a_value_made_from_a_hand_written_schema_is_accepted_by_it(
    schema: dict[str, Any],
) -> None:
    jsonschema.validate(value_for(schema), schema)


def test_a_ref_that_points_nowhere_gives_a_value_rather_than_an_error() -> None:
    assert value_for({"$ref": "#/$defs/Missing"}) == "a"
    assert value_for({"$ref": "https://example.com/schema"}) == "a"
