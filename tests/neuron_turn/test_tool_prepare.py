"""A tool's `prepare` decides per turn whether, and as what, the model is offered it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from layer0 import DispatchFailed, NonRetryableError, TurnConfig
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import RunContext, ToolPrepareError, ToolSchema, tool
from neuron_turn import ToolResultPart
from neuron_turn.cli._errors import EXIT_PLUGIN, classify

from .support import answer, ask, build, call, calls


@dataclass
class User:
    name: str
    admin: bool


SEEN: list[tuple[Any, str | None, str | None]] = []


def admins_only(ctx: RunContext[User], schema: ToolSchema) -> ToolSchema | None:
    SEEN.append((ctx.deps, ctx.session, ctx.tool_name))
    if not ctx.deps.admin:
        return None
    return schema.model_copy(update={"description": f"{schema.description} (for {ctx.deps.name})"})


@tool(prepare=admins_only)
async def drop_table(table: str) -> str:
    """Drop a table."""
    return f"dropped {table}"


@tool
async def read_table(table: str) -> str:
    """Read a table."""
    return f"rows of {table}"


async def test_a_tool_its_prepare_leaves_out_is_not_offered_and_a_call_to_it_is_refused() -> None:
    script = [calls(call("c1", "drop_table", table="users")), answer("could not")]
    turn, model = build(script, tools=[drop_table, read_table])

    output = await turn.execute(ask("drop users", session="s1"), deps=User("bo", admin=False))

    assert [t.name for t in model.requests[0].tools if "table" in t.name] == ["read_table"]
    (refused,) = model.requests[1].messages[-1].content
    assert isinstance(refused, ToolResultPart) and refused.is_error
    assert refused.content == "Error: the tool 'drop_table' is not allowed in this turn"
    assert output.metadata.tools_called[0].success is False


async def test_a_prepare_sees_the_run_and_may_change_what_the_model_is_shown() -> None:
    SEEN.clear()
    script = [calls(call("c1", "drop_table", table="logs")), answer("done")]
    turn, model = build(script, tools=[drop_table, read_table])
    admin = User("ann", admin=True)

    await turn.execute(ask("drop logs", session="s1"), deps=admin)

    offered = {t.name: t.description for t in model.requests[0].tools}
    assert offered["drop_table"] == "Drop a table. (for ann)"
    assert SEEN == [(admin, "s1", "drop_table")]  # once a turn, not once a model call
    (result,) = model.requests[1].messages[-1].content
    assert result == ToolResultPart("c1", "dropped logs")


async def test_an_async_prepare_within_the_allowed_tools_narrows_them_further() -> None:
    async def never(ctx: RunContext[None], schema: ToolSchema) -> ToolSchema | None:
        return None

    hidden = tool(prepare=never)(read_table.function)
    script = [calls(call("c1", "read_table", table="t")), answer("ok")]
    turn, model = build(script, tools=[hidden, drop_table])
    config = TurnConfig(allowed_tools=["read_table"])

    await turn.execute(ask("read", config=config), deps=User("x", admin=True))

    assert model.requests[0].tools == []
    (refused,) = model.requests[1].messages[-1].content
    assert isinstance(refused, ToolResultPart) and "not allowed in this turn" in refused.content


@pytest.mark.parametrize(
    ("prepare", "reason"),
    [
        (lambda ctx, schema: 1 / 0, "raised ZeroDivisionError: division by zero"),
        (lambda ctx, schema: "yes", "returned str, not a ToolSchema or None"),
        (
            lambda ctx, schema: schema.model_copy(update={"name": "other"}),
            "renamed the tool to 'other'; it is called by its registered name",
        ),
    ],
)
async def test_a_prepare_that_fails_fails_the_turn_naming_the_tool_before_any_model_call(
    prepare: Any, reason: str
) -> None:
    broken = tool(name="broken", prepare=prepare)(read_table.function)
    turn, model = build([answer("never")], tools=[broken])

    with pytest.raises(ToolPrepareError) as raised:
        await turn.execute(ask("go"))

    assert str(raised.value) == f"the prepare of tool 'broken' {reason}"
    assert model.requests == []


async def test_a_failed_prepare_is_not_retried_and_the_command_line_names_the_fix() -> None:
    broken = tool(name="broken", prepare=lambda ctx, schema: 1 / 0)(read_table.function)
    turn, model = build([answer("never")], tools=[broken])
    orchestrator = LocalOrchestrator({"a": turn}, InMemoryStore())

    with pytest.raises(DispatchFailed) as failed:
        await orchestrator.dispatch("a", ask("go"))

    assert isinstance(failed.value.__cause__, ToolPrepareError)
    assert isinstance(failed.value.__cause__, NonRetryableError)  # the same code fails again
    assert model.requests == []
    code, line = classify(failed.value, model=None)
    assert code == EXIT_PLUGIN
    assert line.startswith("the prepare of tool 'broken' raised ZeroDivisionError")
    assert line.endswith("; fix that tool's prepare where the tool is defined")
