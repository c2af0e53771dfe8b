"""Tool sources: a registry asks them for each run's tools, checked as its own are."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from neuron_tool import (
    FunctionToolSource,
    RunContext,
    ToolDyn,
    ToolRegistrationError,
    ToolRegistry,
    ToolSourceError,
    tool,
    tool_source,
)


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key


@tool
def ban(user: str) -> str:
    """Ban a user."""
    return user


@tool_source
def admin_tools(ctx: RunContext[dict[str, bool]]) -> list[ToolDyn]:
    return [ban] if ctx.deps.get("admin") else []


async def test_a_registry_asks_its_sources_for_each_runs_tools_with_the_runs_context() -> None:
    registry = ToolRegistry([lookup, admin_tools])

    admin = await registry.for_run(RunContext(deps={"admin": True}))
    guest = await registry.for_run(RunContext(deps={"admin": False}))

    assert registry.names() == ["lookup"] and registry.sources == (admin_tools,)
    assert admin.names() == ["lookup", "ban"] and admin.sources == ()
    assert guest.names() == ["lookup"]


async def test_a_registry_without_sources_is_its_own_run_registry() -> None:
    registry = ToolRegistry([lookup])

    assert await registry.for_run(RunContext(deps=None)) is registry


async def test_sources_are_asked_at_once_not_one_after_another() -> None:
    both_asked = asyncio.Barrier(2)

    async def waits(ctx: RunContext[None]) -> list[ToolDyn]:
        await both_asked.wait()  # returns only once the other source was asked too
        return []

    registry = ToolRegistry([FunctionToolSource(waits, name="a"), FunctionToolSource(waits)])

    await asyncio.wait_for(registry.for_run(RunContext(deps=None)), timeout=10)


async def test_the_middleware_wraps_a_sources_tools_too() -> None:
    seen: list[str] = []

    async def note(call: Any, call_next: Any) -> Any:
        seen.append(call.name)
        return await call_next(call)

    registry = ToolRegistry([admin_tools], middleware=[note])
    run = await registry.for_run(RunContext(deps={"admin": True}))

    assert await run.call("ban", {"user": "mallory"}) == "mallory"
    assert seen == ["ban"]


@pytest.mark.parametrize(
    ("source", "says"),
    [
        (
            FunctionToolSource(lambda ctx: [lookup], name="dup"),
            "'dup' gave a tool it cannot offer: tool 'lookup': a tool with this name is already",
        ),
        (FunctionToolSource(lambda ctx: "ban", name="text"), "'text' gave str, not tools"),
        (FunctionToolSource(lambda ctx: 1 / 0, name="broken"), "'broken' raised ZeroDivisionError"),
        (
            FunctionToolSource(lambda ctx: [object()], name="junk"),
            "'junk' gave a tool it cannot offer",
        ),
    ],
)
async def test_a_source_failing_or_giving_a_bad_tool_fails_the_run_naming_it(
    source: FunctionToolSource, says: str
) -> None:
    registry = ToolRegistry([lookup, source])

    with pytest.raises(ToolSourceError, match=says):
        await registry.for_run(RunContext(deps=None))


async def test_two_sources_giving_one_name_fail_the_run_naming_the_second() -> None:
    first = FunctionToolSource(lambda ctx: [ban], name="first")
    second = FunctionToolSource(lambda ctx: [ban], name="second")

    with pytest.raises(ToolSourceError, match="'second' gave"):
        await ToolRegistry([first, second]).for_run(RunContext(deps=None))


async def test_an_async_source_is_awaited() -> None:
    @tool_source
    async def later(ctx: RunContext[None]) -> Sequence[ToolDyn]:
        return [ban]

    run = await ToolRegistry([later]).for_run(RunContext(deps=None))

    assert run.names() == ["ban"]


def test_a_registry_with_tools_for_a_call_keeps_its_sources() -> None:
    registry = ToolRegistry([admin_tools])

    assert registry.with_tools([lookup]).sources == (admin_tools,)


def test_adding_what_is_no_source_is_refused() -> None:
    with pytest.raises(ToolRegistrationError, match="tools_for"):
        ToolRegistry().add_source(object())  # type: ignore[arg-type]


async def test_a_failing_source_fails_the_run_only_once_the_others_have_answered() -> None:
    slow_done = asyncio.Event()
    failing_asked = asyncio.Event()

    async def slow(ctx: RunContext[None]) -> list[ToolDyn]:
        await failing_asked.wait()  # answers only after the other source has failed
        slow_done.set()
        return [ban]

    async def failing(ctx: RunContext[None]) -> list[ToolDyn]:
        failing_asked.set()
        raise ConnectionError("gone")

    registry = ToolRegistry([FunctionToolSource(slow), FunctionToolSource(failing)])

    with pytest.raises(ToolSourceError, match="'failing' raised ConnectionError: gone"):
        await registry.for_run(RunContext(deps=None))

    assert slow_done.is_set()  # nothing of the run is left running behind it


async def test_for_step_asks_only_the_step_sources_again_and_keeps_the_runs_other_tools() -> None:
    asked = {"run": 0, "step": 0}

    @tool_source
    def per_run(ctx: RunContext[None]) -> list[ToolDyn]:
        asked["run"] += 1
        return [lookup]

    @tool_source(per_step=True)
    def per_step(ctx: RunContext[None]) -> list[ToolDyn]:
        asked["step"] += 1
        return [ban] if ctx.step % 2 else []

    registry = ToolRegistry([per_step, per_run])
    run = await registry.for_run(RunContext(deps=None))
    second = await run.for_step(RunContext(deps=None, step=1))
    third = await second.for_step(RunContext(deps=None, step=2))

    assert (run.names(), second.names(), third.names()) == (
        ["lookup"],
        ["lookup", "ban"],
        ["lookup"],
    )
    assert asked == {"run": 1, "step": 3}
    assert run.step_sources == second.step_sources == (per_step,)


async def test_for_step_without_step_sources_is_the_same_registry() -> None:
    run = await ToolRegistry([lookup, admin_tools]).for_run(RunContext(deps={"admin": True}))

    assert run.step_sources == () and await run.for_step(RunContext(deps=None, step=1)) is run
