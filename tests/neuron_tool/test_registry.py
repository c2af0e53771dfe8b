from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jsonschema
import jsonschema_rs
import pytest
from pydantic import JsonValue

from neuron_tool import (
    ModelRetry,
    Next,
    ToolCall,
    ToolCallError,
    ToolInputError,
    ToolNotFoundError,
    ToolPermissionError,
    ToolRegistrationError,
    ToolRegistry,
    ToolSchema,
    _compiled_schemas,
    tool,
)
from neuron_tool._compiled_schemas import CompiledSchemas

if TYPE_CHECKING:
    # Only for annotations: fixtures hand the class over at run time.
    from conftest import FakeTool


async def raise_value_error(input: JsonValue) -> JsonValue:
    raise ValueError("disk full")


async def raise_model_retry(input: JsonValue) -> JsonValue:
    raise ModelRetry("pass an ISO date")


async def raise_bare_exception(input: JsonValue) -> JsonValue:
    raise RuntimeError


def test_registration_order_is_kept_by_names_iteration_and_schemas(
    make_tool: type[FakeTool],
) -> None:
    tools = [make_tool("b"), make_tool("a"), make_tool("c")]
    registry = ToolRegistry(tools)
    assert registry.names() == ["b", "a", "c"]
    assert list(registry) == tools
    assert [schema.name for schema in registry.schemas()] == ["b", "a", "c"]
    assert len(registry) == 3


def test_contains_checks_registered_names(make_tool: type[FakeTool]) -> None:
    registry = ToolRegistry([make_tool("a")])
    assert "a" in registry
    assert "b" not in registry
    assert 1 not in registry


def test_duplicate_name_is_refused_naming_it(make_tool: type[FakeTool], echo: FakeTool) -> None:
    registry = ToolRegistry([echo])
    with pytest.raises(ToolRegistrationError) as caught:
        registry.register(make_tool("echo"))
    assert caught.value.tool == "echo"
    assert "already registered" in str(caught.value)
    assert registry.get("echo") is echo


def test_invalid_input_schema_is_refused_with_the_reason(make_tool: type[FakeTool]) -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolRegistrationError) as caught:
        registry.register(make_tool("bad", input_schema={"type": "objekt"}))
    assert caught.value.tool == "bad"
    assert "'objekt' is not valid" in caught.value.reason
    assert "bad" not in registry


@pytest.mark.parametrize("name", ["", "has space", "dots.are.out", "x" * 65])
def test_names_providers_would_reject_are_refused(make_tool: type[FakeTool], name: str) -> None:
    with pytest.raises(ToolRegistrationError) as caught:
        ToolRegistry().register(make_tool(name))
    assert "1-64 characters" in caught.value.reason


def test_object_that_is_not_a_tool_is_refused() -> None:
    with pytest.raises(ToolRegistrationError) as caught:
        ToolRegistry().register(object())  # type: ignore[arg-type]
    assert "not a ToolDyn" in caught.value.reason


def test_unregister_removes_the_tool_and_unknown_names_raise(echo: FakeTool) -> None:
    registry = ToolRegistry([echo])
    registry.unregister("echo")
    assert "echo" not in registry
    with pytest.raises(ToolNotFoundError):
        registry.unregister("echo")


def test_get_unknown_tool_lists_available_tools(make_tool: type[FakeTool]) -> None:
    registry = ToolRegistry([make_tool("search"), make_tool("fetch")])
    with pytest.raises(ToolNotFoundError) as caught:
        registry.get("nope")
    assert caught.value.available == ("search", "fetch")


def test_schemas_filter_by_allowed_names_in_registration_order(make_tool: type[FakeTool]) -> None:
    registry = ToolRegistry([make_tool("a"), make_tool("b"), make_tool("c")])
    schemas = registry.schemas(allowed=["c", "a", "unregistered"])
    assert [schema.name for schema in schemas] == ["a", "c"]
    assert registry.schemas(allowed=()) == []


def test_schema_carries_name_description_and_input_schema(echo: FakeTool) -> None:
    [schema] = ToolRegistry([echo]).schemas()
    assert schema == ToolSchema(
        name="echo", description="The echo tool.", input_schema=echo.input_schema
    )


def test_editing_the_tool_schema_after_registration_changes_nothing(
    make_tool: type[FakeTool], echo: FakeTool
) -> None:
    schema: dict[str, JsonValue] = {"type": "object", "required": ["text"]}
    registry = ToolRegistry([make_tool("t", input_schema=schema)])
    schema["required"] = ["other"]
    assert registry.schemas()[0].input_schema["required"] == ["text"]


async def test_input_validator_is_compiled_once_at_registration(
    monkeypatch: pytest.MonkeyPatch, echo: FakeTool
) -> None:
    compiled: list[str] = []
    slow, fast = jsonschema.Draft202012Validator, jsonschema_rs.Draft202012Validator

    class CountingSlow:
        check_schema = staticmethod(slow.check_schema)

        def __new__(cls, schema: Any, **options: Any) -> Any:
            compiled.append("jsonschema")
            return slow(schema, **options)

    def counting_fast(schema: Any, **options: Any) -> Any:
        compiled.append("jsonschema-rs")
        return fast(schema, **options)

    monkeypatch.setattr(jsonschema, "Draft202012Validator", CountingSlow)
    monkeypatch.setattr(jsonschema_rs, "Draft202012Validator", counting_fast)
    monkeypatch.setattr(_compiled_schemas, "COMPILED", CompiledSchemas())  # none seen before
    registry = ToolRegistry([echo])
    for _ in range(3):
        await registry.call("echo", {"text": "hi"})
    with pytest.raises(ToolInputError):
        await registry.call("echo", {"text": 5})
    assert sorted(compiled) == ["jsonschema", "jsonschema-rs"]
    assert len(echo.inputs) == 3


async def test_call_runs_the_tool_and_returns_its_result(echo: FakeTool) -> None:
    registry = ToolRegistry([echo])
    assert await registry.call("echo", {"text": "hi"}) == {"text": "hi"}
    assert echo.inputs == [{"text": "hi"}]


async def test_call_unknown_tool_lists_available_tools(make_tool: type[FakeTool]) -> None:
    registry = ToolRegistry([make_tool("search"), make_tool("fetch")])
    with pytest.raises(ToolNotFoundError) as caught:
        await registry.call("serch", {})
    assert str(caught.value) == (
        "unknown tool 'serch' (did you mean 'search'?); available: search, fetch"
    )


async def test_invalid_input_is_refused_with_json_path_before_the_tool_runs(
    echo: FakeTool,
) -> None:
    registry = ToolRegistry([echo])
    with pytest.raises(ToolInputError) as caught:
        await registry.call("echo", {"text": 3})
    assert (caught.value.tool, caught.value.path) == ("echo", "$.text")
    assert caught.value.message == "3 is not of type 'string'"
    assert echo.inputs == []


async def test_validate_false_skips_schema_validation(echo: FakeTool) -> None:
    registry = ToolRegistry([echo])
    assert await registry.call("echo", {"text": 3}, validate=False) == {"text": 3}


async def test_function_tool_is_validated_by_schema_then_coerced_by_pydantic() -> None:
    @tool
    async def double(n: int) -> int:
        return n * 2

    registry = ToolRegistry([double])
    assert await registry.call("double", {"n": 4}) == 8
    with pytest.raises(ToolInputError) as caught:
        await registry.call("double", {"n": "4x"})
    assert caught.value.path == "$.n"


async def test_exception_from_tool_is_wrapped_in_tool_call_error_keeping_the_cause(
    make_tool: type[FakeTool],
) -> None:
    registry = ToolRegistry([make_tool("t", behaviour=raise_value_error)])
    with pytest.raises(ToolCallError) as caught:
        await registry.call("t", {"text": "x"})
    assert caught.value.tool == "t"
    assert caught.value.message == "ValueError: disk full"
    assert isinstance(caught.value.__cause__, ValueError)


async def test_exception_without_text_is_described_by_its_type(make_tool: type[FakeTool]) -> None:
    registry = ToolRegistry([make_tool("t", behaviour=raise_bare_exception)])
    with pytest.raises(ToolCallError) as caught:
        await registry.call("t", {"text": "x"})
    assert caught.value.message == "RuntimeError"


async def test_sync_function_tool_errors_are_wrapped_too() -> None:
    @tool
    def explode() -> None:
        raise KeyError("gone")

    with pytest.raises(ToolCallError) as caught:
        await ToolRegistry([explode]).call("explode", {})
    assert isinstance(caught.value.__cause__, KeyError)


async def test_model_retry_passes_through_untouched(make_tool: type[FakeTool]) -> None:
    registry = ToolRegistry([make_tool("t", behaviour=raise_model_retry)])
    with pytest.raises(ModelRetry) as caught:
        await registry.call("t", {"text": "x"})
    assert caught.value.hint == "pass an ISO date"
    assert caught.value.__cause__ is None


async def test_model_retry_passes_through_middleware_chains_too(make_tool: type[FakeTool]) -> None:
    async def passthrough(call: ToolCall, next: Next) -> JsonValue:
        return await next(call)

    registry = ToolRegistry([make_tool("t", behaviour=raise_model_retry)], middleware=[passthrough])
    with pytest.raises(ModelRetry):
        await registry.call("t", {"text": "x"})


async def test_tool_error_raised_by_a_tool_is_not_rewrapped() -> None:
    @tool
    async def strict(n: int) -> int:
        return n

    with pytest.raises(ToolInputError):
        await ToolRegistry([strict]).call("strict", {"n": "x"}, validate=False)


async def test_tool_error_raised_by_middleware_passes_as_it_is(echo: FakeTool) -> None:
    async def deny(call: ToolCall, next: Next) -> JsonValue:
        raise ToolPermissionError(call.name, "read-only")

    registry = ToolRegistry([echo], middleware=[deny])
    with pytest.raises(ToolPermissionError):
        await registry.call("echo", {"text": "x"})
    assert echo.inputs == []


async def test_other_exception_from_middleware_is_wrapped_in_tool_call_error(
    echo: FakeTool,
) -> None:
    async def buggy(call: ToolCall, next: Next) -> JsonValue:
        raise AttributeError("oops")

    registry = ToolRegistry([echo], middleware=[buggy])
    with pytest.raises(ToolCallError) as caught:
        await registry.call("echo", {"text": "x"})
    assert caught.value.message == "middleware raised AttributeError: oops"
    assert isinstance(caught.value.__cause__, AttributeError)
