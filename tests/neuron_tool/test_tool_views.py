"""Tool views: a source's or a list's tools filtered, prefixed or renamed, the tools unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from neuron_tool import (
    FunctionTool,
    RunContext,
    ToolDyn,
    ToolRegistry,
    ToolSourceError,
    ToolSourceView,
    ToolViewError,
    each_step,
    filtered_tools,
    prefixed_tools,
    renamed_tools,
    tool,
    tool_source,
)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def mul(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


@tool(strict=True, sequential=True)
def wipe(disk: str) -> str:
    """Wipe a disk."""
    return f"wiped {disk}"


@tool
def whoami(ctx: RunContext[str]) -> str:
    """Say who calls."""
    return ctx.deps


@tool_source
def maths(ctx: RunContext[Any]) -> list[ToolDyn]:
    return [add, mul, wipe, whoami]


async def _names(source: ToolSourceView, deps: Any = None) -> list[str]:
    return [t.name for t in await source.tools_for(RunContext(deps=deps))]


async def test_filtered_keeps_the_allowed_drops_the_blocked_and_block_wins() -> None:
    only = filtered_tools(maths, allow=["add", "mul", "wipe", "not_given_yet"], block=["wipe"])

    assert await _names(only) == ["add", "mul"]
    assert await _names(filtered_tools(maths, block={"wipe"})) == ["add", "mul", "whoami"]


async def test_filtered_asks_where_each_run_with_that_runs_context() -> None:
    async def for_admins(ctx: RunContext[dict[str, bool]], tool: ToolDyn) -> bool:
        return tool.name != "wipe" or ctx.deps["admin"]

    view = filtered_tools(maths, where=for_admins)

    assert await _names(view, {"admin": True}) == ["add", "mul", "wipe", "whoami"]
    assert await _names(view, {"admin": False}) == ["add", "mul", "whoami"]


async def test_a_filtered_out_tool_is_not_in_the_runs_registry_so_a_call_to_it_is_unknown() -> None:
    run = await ToolRegistry([filtered_tools(maths, allow=["add"])]).for_run(RunContext(deps=None))

    assert run.names() == ["add"] and "wipe" not in run


@pytest.mark.parametrize(
    ("where", "match"),
    [
        (
            lambda ctx, tool: 1 / 0,
            r"'maths' has a filter that raised ZeroDivisionError on tool 'add'",
        ),
        (lambda ctx, tool: "yes", r"'maths' has a filter that gave str for tool 'add', not True"),
    ],
)
async def test_a_filter_that_raises_or_gives_no_bool_fails_the_run_naming_source_and_tool(
    where: Any, match: str
) -> None:
    registry = ToolRegistry([filtered_tools(maths, where=where)])

    with pytest.raises(ToolSourceError, match=match):
        await registry.for_run(RunContext(deps=None))


def test_filtered_refuses_a_string_for_names_and_what_is_no_source() -> None:
    with pytest.raises(ToolViewError, match="allow takes a collection of names; got 'add'"):
        filtered_tools(maths, allow="add")
    with pytest.raises(ToolViewError, match="block holds 3, not a tool's name"):
        filtered_tools(maths, block=[3])  # type: ignore[list-item]
    with pytest.raises(ToolViewError, match=r"not a tool source \(it needs `tools_for"):
        filtered_tools([add], allow=["add"])  # type: ignore[arg-type]


async def test_prefixed_offers_a_sources_and_a_lists_tools_under_the_prefix() -> None:
    listed = prefixed_tools([add, mul], "calc_")

    assert [t.name for t in listed] == ["calc_add", "calc_mul"]
    assert await _names(prefixed_tools(maths, "m-")) == ["m-add", "m-mul", "m-wipe", "m-whoami"]
    assert [t.name for t in [add, mul]] == ["add", "mul"]  # the tools themselves unchanged


@pytest.mark.parametrize("prefix", ["", "a b", "é_", "x" * 64])
def test_prefixed_refuses_a_prefix_no_tool_name_may_hold(prefix: str) -> None:
    with pytest.raises(ToolViewError, match="the prefix must be 1-63 characters"):
        prefixed_tools([add], prefix)


async def test_a_prefix_too_long_for_a_name_is_refused_for_a_list_and_fails_a_sources_run() -> None:
    long = FunctionTool(lambda: "x", name="t" * 61)

    with pytest.raises(ToolViewError, match=r"'p_p_tttt.* is longer than 64 characters"):
        prefixed_tools([long], "p_p_")

    @tool_source
    def longs(ctx: RunContext[None]) -> list[ToolDyn]:
        return [long]

    registry = ToolRegistry([prefixed_tools(longs, "p_p_")])
    with pytest.raises(ToolSourceError, match="'longs' gave a tool it cannot offer: tool 'p_p_t"):
        await registry.for_run(RunContext(deps=None))


async def test_renamed_offers_the_named_tools_by_new_names_and_leaves_the_rest() -> None:
    listed = renamed_tools([add, mul], {"plus": "add"})

    assert [t.name for t in listed] == ["plus", "mul"] and listed[1] is mul
    view = renamed_tools(maths, {"plus": "add", "times": "mul", "later": "not_given_yet"})
    assert await _names(view) == ["plus", "times", "wipe", "whoami"]


def test_renamed_refuses_bad_new_names_two_names_for_one_tool_and_a_tool_not_listed() -> None:
    with pytest.raises(ToolViewError, match="new name 'a b': names must be 1-64 characters"):
        renamed_tools([add], {"a b": "add"})
    with pytest.raises(ToolViewError, match="'plus' and 'sum' both rename 'add'"):
        renamed_tools([add], {"plus": "add", "sum": "add"})
    with pytest.raises(ToolViewError, match="no tool 'minus' to rename among 'add', 'mul'"):
        renamed_tools([add, mul], {"less": "minus"})
    with pytest.raises(ToolViewError, match="give a tool source or a list of tools"):
        renamed_tools("add", {"plus": "add"})  # type: ignore[call-overload]


async def test_a_renamed_tool_keeps_its_call_schema_strictness_marks_and_run_context() -> None:
    plus, shout, me = renamed_tools(
        [add, wipe, whoami], {"plus": "add", "shout": "wipe", "me": "whoami"}
    )
    registry = ToolRegistry([plus, shout, me])

    assert await registry.call("plus", {"a": 2, "b": 3}) == 5
    assert await registry.call("me", {}, context=RunContext(deps="ann")) == "ann"
    assert registry.sequential_names == frozenset({"shout"})
    schemas = {s.name: s for s in registry.schemas()}
    assert schemas["shout"].strict is True and schemas["plus"].strict is None
    assert schemas["plus"].input_schema == add.input_schema
    assert schemas["plus"].description == "Add two numbers."


async def test_a_tool_renamed_twice_wraps_the_tool_not_the_first_view() -> None:
    (twice,) = prefixed_tools(renamed_tools([add], {"plus": "add"}), "calc_")

    assert twice.name == "calc_plus"
    assert repr(twice) == f"{add!r} as 'calc_plus'"
    assert await twice.call({"a": 1, "b": 1}) == 2


async def test_views_compose_filter_then_prefix_and_errors_name_the_innermost_source() -> None:
    @tool_source
    def down(ctx: RunContext[None]) -> list[ToolDyn]:
        raise ConnectionError("gone")

    view = prefixed_tools(filtered_tools(maths, allow=["add"]), "m_")

    assert await _names(view) == ["m_add"]
    registry = ToolRegistry([prefixed_tools(down, "d_")])
    with pytest.raises(ToolSourceError, match="'down' raised ConnectionError: gone"):
        await registry.for_run(RunContext(deps=None))
    assert repr(view) == "prefixed_tools(filtered_tools(FunctionToolSource('maths')), 'm_')"


def test_a_view_is_asked_per_step_when_its_source_is() -> None:
    @tool_source(per_step=True)
    def stepping(ctx: RunContext[None]) -> list[ToolDyn]:
        return []

    assert prefixed_tools(stepping, "s_").per_step is True
    assert filtered_tools(renamed_tools(stepping, {"x": "y"}), block=["x"]).per_step is True
    assert prefixed_tools(maths, "m_").per_step is False


async def test_each_step_makes_any_source_asked_per_step_and_gives_its_tools_as_they_are() -> None:
    stepped = each_step(maths)

    assert stepped.per_step is True and maths.per_step is False
    assert await _names(stepped) == ["add", "mul", "wipe", "whoami"]
    assert prefixed_tools(stepped, "m_").per_step is True
    with pytest.raises(ToolViewError, match="not a tool source"):
        each_step([add])  # type: ignore[arg-type]
