from __future__ import annotations

import asyncio
import datetime as dt
import enum
import threading
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from uuid import UUID

import pytest
from pydantic import BaseModel

from neuron_tool import (
    FunctionTool,
    RunContext,
    ToolAnnotations,
    ToolContextError,
    ToolInputError,
    ToolIsolationError,
    tool,
)


class Colour(enum.Enum):
    RED = "red"


class Point(BaseModel):
    x: int
    y: int


@dataclass
class Box:
    label: str
    size: Decimal


def where_did_it_run() -> dict[str, object]:
    """Report the thread and whether an event loop runs there."""
    try:
        asyncio.get_running_loop()
        on_loop = True
    except RuntimeError:
        on_loop = False
    return {"thread": threading.get_ident(), "on_loop": on_loop}


async def test_sync_tool_runs_off_the_event_loop() -> None:
    result = await tool(where_did_it_run).call({})
    assert isinstance(result, dict)
    assert result["on_loop"] is False
    assert result["thread"] != threading.get_ident()


async def test_async_tool_runs_on_the_event_loop() -> None:
    @tool
    async def here() -> int:
        asyncio.get_running_loop()
        return threading.get_ident()

    assert await here.call({}) == threading.get_ident()


async def test_callable_object_with_async_call_is_awaited_on_the_loop() -> None:
    class Greeter:
        __name__ = "greet"

        async def __call__(self, who: str) -> str:
            return f"hello {who}"

    assert await FunctionTool(Greeter()).call({"who": "ana"}) == "hello ana"


async def test_arguments_are_coerced_by_pydantic_before_the_call() -> None:
    seen: list[object] = []

    @tool
    async def record(when: dt.date, point: Point, count: int = 1) -> None:
        seen.extend([when, point, count])

    await record.call({"when": "2024-05-06", "point": {"x": 1, "y": "2"}})
    assert seen == [dt.date(2024, 5, 6), Point(x=1, y=2), 1]


async def test_positional_only_parameters_are_passed_positionally() -> None:
    @tool
    async def divide(a: float, b: float, /) -> float:
        return a / b

    assert await divide.call({"a": 6, "b": 3}) == 2.0


async def test_invalid_argument_raises_input_error_naming_the_field() -> None:
    @tool
    async def locate(point: Point) -> None:
        return None

    with pytest.raises(ToolInputError) as caught:
        await locate.call({"point": {"x": 1, "y": "north"}})
    assert caught.value.tool == "locate"
    assert caught.value.path == "$.point.y"
    assert "valid integer" in caught.value.message


async def test_several_invalid_arguments_report_the_first_and_count_the_rest() -> None:
    @tool
    async def locate(point: Point) -> None:
        return None

    with pytest.raises(ToolInputError) as caught:
        await locate.call({"point": {}})
    assert caught.value.path == "$.point.x"
    assert caught.value.message == "Field required (and 1 more)"


async def test_unknown_argument_is_refused() -> None:
    @tool
    async def noop() -> None:
        return None

    with pytest.raises(ToolInputError) as caught:
        await noop.call({"surprise": 1})
    assert caught.value.path == "$.surprise"


async def test_input_that_is_not_an_object_is_refused_at_the_root() -> None:
    @tool
    async def noop() -> None:
        return None

    with pytest.raises(ToolInputError) as caught:
        await noop.call([1, 2])
    assert caught.value.path == "$"
    assert caught.value.message == "expected an object of arguments, got list"


async def test_result_is_json_encoded_whatever_python_type_it_has() -> None:
    @tool
    async def everything() -> dict[str, object]:
        return {
            "model": Point(x=1, y=2),
            "dataclass": Box("b", Decimal("1.50")),
            "decimal": Decimal("2.25"),
            "datetime": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
            "uuid": UUID(int=1),
            "path": Path("/tmp/x"),
            "enum": Colour.RED,
            "tuple": (1, 2),
        }

    assert await everything.call({}) == {
        "model": {"x": 1, "y": 2},
        "dataclass": {"label": "b", "size": "1.50"},
        "decimal": "2.25",
        "datetime": "2024-01-02T03:04:05Z",
        "uuid": "00000000-0000-0000-0000-000000000001",
        "path": "/tmp/x",
        "enum": "red",
        "tuple": [1, 2],
    }


def test_annotations_dump_with_mcp_camel_case_names() -> None:
    hints = ToolAnnotations(title="Search", read_only_hint=True, open_world_hint=False)
    assert hints.model_dump(by_alias=True, exclude_none=True) == {
        "title": "Search",
        "readOnlyHint": True,
        "openWorldHint": False,
    }
    assert ToolAnnotations.model_validate({"readOnlyHint": True}).read_only_hint is True


async def test_bound_arguments_run_later_return_what_the_function_returned_as_it_is() -> None:
    def measure(ctx: RunContext[int], point: Point) -> Point:
        return Point(x=point.x * ctx.deps, y=point.y)

    made = FunctionTool(measure)
    bound = made.arguments({"point": {"x": "2", "y": 3}})

    returned = await made.returned(bound, RunContext(deps=10))

    assert returned == Point(x=20, y=3)  # the model itself, not its JSON
    assert bound.args == () and bound.kwargs == {"point": Point(x=2, y=3)}


async def test_binding_refuses_bad_input_before_anything_runs() -> None:
    ran: list[int] = []
    made = FunctionTool(lambda x: ran.append(x), name="note")

    with pytest.raises(ToolInputError, match="extra"):
        made.arguments({"x": 1, "extra": 2})

    assert ran == []


async def test_bound_arguments_refuse_deps_of_another_type_than_asked() -> None:
    def scaled(ctx: RunContext[int], x: int) -> int:
        return x * ctx.deps

    made = FunctionTool(scaled)

    with pytest.raises(ToolContextError, match="int"):
        await made.returned(made.arguments({"x": 1}), RunContext(deps="ten"))


async def test_bound_arguments_refuse_to_run_a_tool_requiring_isolation_outside_it() -> None:
    made = FunctionTool(lambda: 1, name="sealed", requires_isolation=True)

    with pytest.raises(ToolIsolationError):
        await made.returned(made.arguments({}), RunContext(deps=None))
