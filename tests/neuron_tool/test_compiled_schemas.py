"""A tool a source gives again reuses its compiled schema; a changed one is compiled anew."""

from __future__ import annotations

import copy
import threading
import typing
from typing import Any

import jsonschema_rs
import pytest
from pydantic import JsonValue

from neuron_tool import (
    RunContext,
    ToolDyn,
    ToolInputError,
    ToolRegistrationError,
    ToolRegistry,
    ToolSourceError,
    _compiled_schemas,
    tool,
    tool_source,
)
from neuron_tool._compiled_schemas import MAX_SCHEMA_BYTES, CompiledSchemas, schema_key
from neuron_tool.registry import _TOOL_MEMBERS, _is_tool

TEXT: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
COUNT: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"count": {"type": "integer"}},
    "required": ["count"],
    "additionalProperties": False,
}


class FakeTool:
    """A tool with a given schema that answers with its input."""

    output_schema: dict[str, JsonValue] | None = None
    annotations = None

    def __init__(self, name: str = "echo", *, input_schema: dict[str, JsonValue] = TEXT) -> None:
        self.name = name
        self.description = f"The {name} tool."
        self.input_schema = input_schema

    async def call(self, input: JsonValue) -> JsonValue:
        return input


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The schemas jsonschema-rs compiles from now on, with a table that has seen none."""
    compiled: list[object] = []
    fast = jsonschema_rs.Draft202012Validator

    def counting(schema: Any, **options: Any) -> Any:
        compiled.append(schema)
        return fast(schema, **options)

    monkeypatch.setattr(jsonschema_rs, "Draft202012Validator", counting)
    monkeypatch.setattr(_compiled_schemas, "COMPILED", CompiledSchemas())
    return compiled


def _small_table(monkeypatch: pytest.MonkeyPatch, **bounds: int) -> CompiledSchemas:
    table = CompiledSchemas(**bounds)
    monkeypatch.setattr(_compiled_schemas, "COMPILED", table)
    return table


def _schema(index: int) -> dict[str, JsonValue]:
    return {"type": "object", "properties": {f"field_{index}": {"type": "string"}}}


async def _steps(give: typing.Callable[[int], list[ToolDyn]], steps: int) -> list[ToolRegistry]:
    """The registries of a run's first `steps` steps, a per-step source giving `give(step)`."""
    source = tool_source(per_step=True)(lambda ctx: give(ctx.step))
    registries = [await ToolRegistry([source]).for_run(RunContext(deps=None))]
    for step in range(1, steps):
        registries.append(await registries[-1].for_step(RunContext(deps=None, step=step)))
    return registries


async def test_a_tool_given_anew_each_step_with_an_equal_schema_is_compiled_once(
    compiles: list[object],
) -> None:
    # An MCP server's listing gives new objects, with new dicts, on every step.
    steps = await _steps(lambda step: [FakeTool("lookup", input_schema=copy.deepcopy(TEXT))], 3)

    assert len(compiles) == 1
    assert all(registry.schemas()[0].input_schema == TEXT for registry in steps)
    with pytest.raises(ToolInputError, match="'text' is a required property"):
        await steps[-1].call("lookup", {})
    assert await steps[-1].call("lookup", {"text": "hi"}) == {"text": "hi"}


async def test_the_same_tool_object_given_again_is_compiled_once(compiles: list[object]) -> None:
    lookup = FakeTool("lookup", input_schema=TEXT)

    await _steps(lambda step: [lookup], 4)

    assert len(compiles) == 1


async def test_a_schema_changed_between_steps_is_validated_by_its_new_schema(
    compiles: list[object],
) -> None:
    # As an MCP server changing a tool's inputSchema: same name, new schema.
    def give(step: int) -> list[ToolDyn]:
        return [FakeTool("lookup", input_schema=copy.deepcopy(TEXT if step == 0 else COUNT))]

    first, second = await _steps(give, 2)

    assert await second.call("lookup", {"count": 3}) == {"count": 3}  # valid only under the new
    with pytest.raises(ToolInputError, match="'count' is a required property"):
        await second.call("lookup", {"text": "hi"})  # valid only under the old
    assert await first.call("lookup", {"text": "hi"}) == {"text": "hi"}  # its step keeps its own
    assert len(compiles) == 2


async def test_a_schema_edited_in_place_between_steps_is_compiled_anew(
    compiles: list[object],
) -> None:
    schema = copy.deepcopy(TEXT)
    lookup = FakeTool("lookup", input_schema=schema)

    def give(step: int) -> list[ToolDyn]:
        if step == 1:
            schema["properties"] = {"text": {"type": "integer"}}
        return [lookup]

    first, second = await _steps(give, 2)

    assert await second.call("lookup", {"text": 5}) == {"text": 5}
    with pytest.raises(ToolInputError, match="is not of type 'integer'"):
        await second.call("lookup", {"text": "five"})
    with pytest.raises(ToolInputError, match="is not of type 'string'"):
        await first.call("lookup", {"text": 5})  # its copy was not edited


async def test_two_tools_sharing_a_schema_are_each_named_in_their_errors(
    compiles: list[object],
) -> None:
    registry = ToolRegistry([FakeTool("a", input_schema=TEXT), FakeTool("b", input_schema=TEXT)])

    with pytest.raises(ToolInputError) as caught:
        await registry.call("b", {})

    assert caught.value.tool == "b" and len(compiles) == 1
    assert [schema.name for schema in registry.schemas()] == ["a", "b"]


async def test_a_schema_one_registry_offers_edited_in_place_leaves_every_other_as_it_was(
    compiles: list[object],
) -> None:
    first = ToolRegistry([FakeTool("a", input_schema=copy.deepcopy(TEXT))])
    second = ToolRegistry([FakeTool("b", input_schema=copy.deepcopy(TEXT))])
    # A caller (or a tool's `prepare`) narrowing what its registry offers, in place.
    properties = first.schemas()[0].input_schema["properties"]
    assert isinstance(properties, dict)
    properties["text"] = {"type": "integer"}
    third = ToolRegistry([FakeTool("c", input_schema=copy.deepcopy(TEXT))])

    assert second.schemas()[0].input_schema == third.schemas()[0].input_schema == TEXT
    for registry, name in ((second, "b"), (third, "c")):
        with pytest.raises(ToolInputError, match="5 is not of type 'string'"):
            await registry.call(name, {"text": 5})
    assert len(compiles) == 1


def test_the_table_keeps_its_capacity_dropping_the_least_recently_used_first(
    monkeypatch: pytest.MonkeyPatch, compiles: list[object]
) -> None:
    table = _small_table(monkeypatch, capacity=3)
    for index in range(3):
        ToolRegistry([FakeTool("t", input_schema=_schema(index))])
    ToolRegistry([FakeTool("t", input_schema=_schema(0))])  # used again: now the most recent
    for index in range(3, 5):
        ToolRegistry([FakeTool("t", input_schema=_schema(index))])

    assert len(table) == 3
    compiles.clear()
    ToolRegistry([FakeTool("t", input_schema=_schema(0))])  # kept
    assert compiles == []
    ToolRegistry([FakeTool("t", input_schema=_schema(1))])  # dropped: compiled again
    assert len(compiles) == 1 and len(table) == 3


def test_the_table_keeps_its_bytes_and_never_a_huge_schema(
    monkeypatch: pytest.MonkeyPatch, compiles: list[object]
) -> None:
    one = len(schema_key(_schema(10)) or b"")
    table = _small_table(monkeypatch, max_bytes=2 * one)
    for index in range(10, 15):
        ToolRegistry([FakeTool("t", input_schema=_schema(index))])
    assert len(table) == 2 and table.size == 2 * one

    huge: dict[str, JsonValue] = {"type": "object", "description": "x" * MAX_SCHEMA_BYTES}
    ToolRegistry([FakeTool("t", input_schema=huge)])
    ToolRegistry([FakeTool("t", input_schema=huge)])
    assert schema_key(huge) is None and len(table) == 2
    assert len(compiles) == 7  # the huge one each time


def test_a_schema_reading_as_a_kept_one_is_still_refused_if_it_is_not_json(
    compiles: list[object],
) -> None:
    ToolRegistry([FakeTool("t", input_schema={"type": "object", "required": ["a"]})])
    # A tuple reads as the list's JSON; the registry refused it before any table existed.
    not_json: Any = {"type": "object", "required": ("a",)}

    with pytest.raises(ToolRegistrationError, match="schema or description is not JSON"):
        ToolRegistry([FakeTool("t", input_schema=not_json)])


async def test_an_invalid_schema_is_refused_every_time_and_never_kept(
    compiles: list[object],
) -> None:
    invalid: dict[str, JsonValue] = {"type": "object", "properties": {"a": {"type": "nope"}}}
    source = tool_source(per_step=True)(lambda ctx: [FakeTool("t", input_schema=invalid)])

    for _ in range(2):
        with pytest.raises(ToolSourceError, match="invalid input schema"):
            await ToolRegistry([source]).for_run(RunContext(deps=None))
    assert len(_compiled_schemas.COMPILED) == 0


def test_registries_built_at_once_on_many_threads_share_one_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = _small_table(monkeypatch, capacity=8)
    failures: list[BaseException] = []

    def build(offset: int) -> None:
        try:
            for index in range(40):
                registry = ToolRegistry(
                    [FakeTool("t", input_schema=_schema((index + offset) % 12))]
                )
                assert registry.schemas()[0].input_schema == _schema((index + offset) % 12)
        except BaseException as exc:  # handed to the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=build, args=(offset,)) for offset in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == [] and len(table) <= 8


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


class _NoCall:
    name = "n"
    description = ""
    input_schema: dict[str, JsonValue] = {}
    output_schema = None
    annotations = None
    call = None


class _Missing:
    name = "m"


def test_the_quick_tool_check_decides_as_the_protocol_check() -> None:
    members = getattr(ToolDyn, "__protocol_attrs__", None) or typing._get_protocol_attrs(  # type: ignore[attr-defined]
        ToolDyn
    )
    assert set(_TOOL_MEMBERS) == set(members)
    for value in (echo, FakeTool(), _NoCall(), _Missing(), object(), "echo", None):
        assert _is_tool(value) == isinstance(value, ToolDyn), value
