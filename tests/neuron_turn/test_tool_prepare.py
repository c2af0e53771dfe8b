"""A tool's `prepare` decides before each model call whether, and as what, the model is
offered it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from layer0 import DispatchFailed, NonRetryableError, TurnConfig
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import RunContext, RunUsage, ToolPrepareError, ToolSchema, tool
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    Decision,
    NeuronTurnConfig,
    ProviderRequest,
    ToolResultPart,
    resume_input,
)
from neuron_turn.cli._errors import EXIT_PLUGIN, classify

from .support import answer, ask, build, call, calls, dollars


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
    assert SEEN == [(admin, "s1", "drop_table")] * 2  # before each of the two model calls
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


def offered(request: ProviderRequest) -> list[str]:
    """The names of the tools `request` offers the model."""
    return [t.name for t in request.tools]


def result_in(request: ProviderRequest) -> ToolResultPart:
    """The one tool result that `request` sends the model last."""
    (part,) = request.messages[-1].content
    assert isinstance(part, ToolResultPart)
    return part


async def test_a_prepare_is_asked_before_every_model_call_with_the_step_and_usage_so_far() -> None:
    asked: list[tuple[int, RunUsage]] = []

    def watch(ctx: RunContext[None], schema: ToolSchema) -> ToolSchema:
        asked.append((ctx.step, ctx.usage))
        return schema

    watched = tool(name="watched", prepare=watch)(read_table.function)
    script = [
        calls(call("c1", "watched", table="a"), cost="0.01"),
        calls(call("c2", "watched", table="b"), call("c3", "watched", table="c"), cost="0.02"),
        answer("done"),
    ]
    turn, model = build(script, tools=[watched])

    output = await turn.execute(ask("read"))

    assert output.exit_reason == "complete" and len(model.requests) == 3
    assert asked == [
        (0, RunUsage()),
        (1, RunUsage(input_tokens=10, output_tokens=5, cost=dollars("0.01"), tool_calls=1)),
        (2, RunUsage(input_tokens=20, output_tokens=10, cost=dollars("0.03"), tool_calls=3)),
    ]


async def test_a_tool_left_out_in_step_0_is_refused_there_and_runs_once_step_1_offers_it() -> None:
    def after_the_first_call(ctx: RunContext[None], schema: ToolSchema) -> ToolSchema | None:
        return schema if ctx.step >= 1 else None

    later = tool(name="later", prepare=after_the_first_call)(read_table.function)
    script = [
        calls(call("c1", "later", table="a")),
        calls(call("c2", "later", table="b")),
        answer("done"),
    ]
    turn, model = build(script, tools=[later, read_table])

    output = await turn.execute(ask("read"))

    assert [offered(r) for r in model.requests] == [
        ["read_table"],
        ["later", "read_table"],
        ["later", "read_table"],
    ]
    refused = result_in(model.requests[1])
    assert refused.is_error
    assert refused.content == "Error: the tool 'later' is not allowed in this turn"
    assert result_in(model.requests[2]) == ToolResultPart("c2", "rows of b")
    assert [r.success for r in output.metadata.tools_called] == [False, True]


async def test_a_tool_offered_in_one_step_and_left_out_in_the_next_is_refused_there() -> None:
    once = tool(name="once", prepare=first_step_only)(read_table.function)
    script = [
        calls(call("c1", "once", table="a")),
        calls(call("c2", "once", table="b")),
        answer("done"),
    ]
    turn, model = build(script, tools=[once])

    await turn.execute(ask("read"))

    assert [offered(r) for r in model.requests] == [["once"], [], []]
    assert result_in(model.requests[1]) == ToolResultPart("c1", "rows of a")
    assert "not allowed in this turn" in result_in(model.requests[2]).content


async def test_each_step_starts_again_from_the_turns_own_allowed_tools() -> None:
    def from_the_second_step(ctx: RunContext[None], schema: ToolSchema) -> ToolSchema | None:
        return schema if ctx.step >= 1 else None

    later = tool(name="later", prepare=from_the_second_step)(read_table.function)
    script = [
        calls(call("c1", "drop_table", table="a")),
        calls(call("c2", "drop_table", table="b")),
        answer("done"),
    ]
    turn, model = build(script, tools=[later, drop_table])
    config = TurnConfig(allowed_tools=["later"])

    await turn.execute(ask("drop", config=config), deps=User("ann", admin=True))

    assert [offered(r) for r in model.requests] == [[], ["later"], ["later"]]
    for request in model.requests[1:]:
        assert "not allowed in this turn" in result_in(request).content


async def test_a_prepare_failing_in_a_later_step_fails_the_turn_naming_the_tool_then() -> None:
    def fails_at_step_two(ctx: RunContext[None], schema: ToolSchema) -> ToolSchema:
        if ctx.step == 2:
            raise LookupError("no plan for step 2")
        return schema

    flaky = tool(name="flaky", prepare=fails_at_step_two)(read_table.function)
    script = [
        calls(call("c1", "flaky", table="a")),
        calls(call("c2", "flaky", table="b")),
        answer("never"),
    ]
    turn, model = build(script, tools=[flaky])

    with pytest.raises(ToolPrepareError) as raised:
        await turn.execute(ask("read"))

    assert str(raised.value) == (
        "the prepare of tool 'flaky' raised LookupError: no plan for step 2"
    )
    assert len(model.requests) == 2  # the first two steps ran, the third was never asked
    assert result_in(model.requests[1]) == ToolResultPart("c1", "rows of a")
    assert classify(raised.value, model=None)[0] == EXIT_PLUGIN


def first_step_only(ctx: RunContext[None], schema: ToolSchema) -> ToolSchema | None:
    return schema if ctx.step == 0 else None


async def test_a_step_leaving_out_the_tool_a_choice_still_forces_fails_before_its_call() -> None:
    forced = tool(name="forced", prepare=first_step_only)(read_table.function)
    script = [calls(call("c1", "forced", table="a")), answer("never")]
    config = NeuronTurnConfig(model="m", tool_choice="forced", reset_tool_choice=False)
    turn, model = build(script, tools=[forced, read_table], config=config)

    with pytest.raises(NonRetryableError, match="tool_choice names 'forced', which this turn"):
        await turn.execute(ask("read"))

    assert len(model.requests) == 1


async def test_a_forced_choice_spent_by_a_call_lets_a_later_step_leave_its_tool_out() -> None:
    forced = tool(name="forced", prepare=first_step_only)(read_table.function)
    script = [calls(call("c1", "forced", table="a")), answer("done")]
    config = NeuronTurnConfig(model="m", tool_choice="forced")
    turn, model = build(script, tools=[forced, read_table], config=config)

    output = await turn.execute(ask("read"))

    assert output.exit_reason == "complete"
    assert offered(model.requests[1]) == ["read_table"]


async def test_a_resume_checks_its_approved_calls_against_the_prepare_of_its_first_step() -> None:
    asked: list[int] = []
    open_now = [True]

    def while_open(ctx: RunContext[None], schema: ToolSchema) -> ToolSchema | None:
        asked.append(ctx.step)
        return schema if open_now[0] else None

    held = tool(name="held", prepare=while_open)(read_table.function)
    store = InMemoryStore()
    config = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["held"]))
    first, _ = build(
        [calls(call("c1", "held", table="a"))], tools=[held], state=store, config=config
    )
    paused = await LocalOrchestrator({"a": first}, store).dispatch("a", ask("read", session="s"))
    assert paused.exit_reason == AWAITING_APPROVAL
    open_now[0], asked[:] = False, []

    turn, model = build([answer("done")], tools=[held], state=store, config=config)
    await LocalOrchestrator({"a": turn}, store).dispatch(
        "a", resume_input("s", [Decision.approve("c1")])
    )

    assert asked == [0]  # once, before the approved call: the first model call uses it too
    refused = result_in(model.requests[0])
    assert refused.is_error and "not allowed in this turn" in refused.content
    assert "held" not in offered(model.requests[0])
