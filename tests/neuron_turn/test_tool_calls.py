"""Step 7: tool calls, hooks around them, failures the model sees, concurrency."""

from __future__ import annotations

import asyncio

from layer0 import (
    Continue,
    HookAction,
    HookContext,
    HookPoint,
    ModifyToolInput,
    SkipTool,
    TurnConfig,
)
from neuron_hooks import FunctionHook, HookRegistry
from neuron_tool import ModelRetry, tool
from neuron_turn import NeuronTurnConfig, ToolResultPart

from .support import answer, ask, build, call, calls, echo


def _results(provider_request_messages: object) -> list[ToolResultPart]:
    last = provider_request_messages[-1]  # type: ignore[index]
    assert last.role == "user"
    return list(last.content)


def _pre_tool_hook(action: HookAction) -> HookRegistry:
    async def decide(ctx: HookContext) -> HookAction:
        return action

    hooks = HookRegistry()
    hooks.add(FunctionHook(decide, points=[HookPoint.PRE_TOOL_USE]))
    return hooks


async def test_skip_tool_backfills_reason_and_records_failure() -> None:
    hooks = _pre_tool_hook(SkipTool(reason="policy: no math"))
    turn, provider = build([calls(call("c1", "add", a=1, b=2)), answer("ok")], hooks=hooks)
    output = await turn.execute(ask())
    (result,) = _results(provider.requests[1].messages)
    assert result.content == "Skipped: policy: no math"
    assert result.is_error is True
    assert output.metadata.tools_called[0].success is False


async def test_modify_tool_input_runs_the_tool_with_the_new_input() -> None:
    hooks = _pre_tool_hook(ModifyToolInput(new_input={"a": 40, "b": 2}))
    turn, provider = build([calls(call("c1", "add", a=1, b=2)), answer("ok")], hooks=hooks)
    await turn.execute(ask())
    (result,) = _results(provider.requests[1].messages)
    assert result.content == "42"


async def test_hooks_see_the_tool_name_input_and_result() -> None:
    seen: list[HookContext] = []

    async def watch(ctx: HookContext) -> HookAction:
        seen.append(ctx)
        return Continue()

    hooks = HookRegistry()
    hooks.add(FunctionHook(watch, points=[HookPoint.PRE_TOOL_USE, HookPoint.POST_TOOL_USE]))
    turn, _ = build([calls(call("c1", "add", a=1, b=2)), answer("ok")], hooks=hooks)
    await turn.execute(ask())
    pre, post = seen
    assert (pre.tool_name, pre.tool_input) == ("add", {"a": 1, "b": 2})
    assert (post.tool_name, post.tool_result) == ("add", "3")
    assert pre.turns_completed == 1 and pre.tokens_used == 15


async def test_unknown_tool_is_never_run_and_the_error_names_it() -> None:
    turn, provider = build([calls(call("c1", "launch_rockets")), answer("ok")])
    output = await turn.execute(ask())
    (result,) = _results(provider.requests[1].messages)
    assert result.is_error
    assert "'launch_rockets'" in result.content and "add, echo" in result.content
    assert output.metadata.tools_called[0].success is False


async def test_tool_not_in_allowed_tools_is_never_run() -> None:
    ran: list[str] = []

    @tool
    async def secret() -> str:
        """A tool the turn may not use."""
        ran.append("secret")
        return "leaked"

    turn, provider = build([calls(call("c1", "secret")), answer("ok")], tools=[secret])
    await turn.execute(ask(config=TurnConfig(allowed_tools=["echo"])))
    (result,) = _results(provider.requests[1].messages)
    assert ran == []
    assert result.is_error and "'secret' is not allowed" in result.content


async def test_invalid_input_gives_the_validation_message_to_the_model() -> None:
    turn, provider = build([calls(call("c1", "add", a="one", b=2)), answer("ok")])
    await turn.execute(ask())
    (result,) = _results(provider.requests[1].messages)
    assert result.is_error
    assert "$.a" in result.content and "integer" in result.content


async def test_raising_tool_gives_the_error_text_to_the_model() -> None:
    @tool
    async def broken() -> str:
        """Fail."""
        raise ValueError("disk on fire")

    turn, provider = build([calls(call("c1", "broken")), answer("ok")], tools=[broken])
    output = await turn.execute(ask())
    (result,) = _results(provider.requests[1].messages)
    assert result.is_error and "disk on fire" in result.content
    assert output.exit_reason == "complete"


async def test_model_retry_gives_the_hint_to_the_model() -> None:
    @tool
    async def picky(city: str) -> str:
        """Only knows Paris."""
        raise ModelRetry(f"unknown city {city!r}; try 'Paris'")

    turn, provider = build([calls(call("c1", "picky", city="Pari")), answer("ok")], tools=[picky])
    await turn.execute(ask())
    (result,) = _results(provider.requests[1].messages)
    assert result.is_error and result.content == "unknown city 'Pari'; try 'Paris'"


async def test_non_string_results_are_json_encoded_and_strings_used_as_is() -> None:
    @tool
    async def info() -> dict[str, object]:
        """Return an object."""
        return {"b": [1, 2], "a": "é"}

    turn, provider = build(
        [calls(call("c1", "info"), call("c2", "echo", text="plain")), answer("ok")],
        tools=[info, echo],
    )
    await turn.execute(ask())
    first, second = _results(provider.requests[1].messages)
    assert first.content == '{"b":[1,2],"a":"é"}'
    assert second.content == "plain"


async def test_results_keep_the_models_order_under_concurrent_execution() -> None:
    release_first = asyncio.Event()
    finished: list[str] = []

    @tool
    async def slow() -> str:
        """Finish only after fast has."""
        await release_first.wait()
        finished.append("slow")
        return "slow"

    @tool
    async def fast() -> str:
        """Finish at once and let slow go on."""
        finished.append("fast")
        release_first.set()
        return "fast"

    script = [calls(call("c1", "slow"), call("c2", "fast")), answer("ok")]
    turn, provider = build(script, tools=[slow, fast])
    output = await turn.execute(ask())
    assert finished == ["fast", "slow"]
    results = _results(provider.requests[1].messages)
    assert [(r.tool_use_id, r.content) for r in results] == [("c1", "slow"), ("c2", "fast")]
    assert [r.name for r in output.metadata.tools_called] == ["slow", "fast"]


async def test_sequential_mode_runs_calls_one_after_another_in_order() -> None:
    order: list[str] = []

    @tool
    async def first() -> str:
        """Record."""
        order.append("first")
        return "1"

    @tool
    async def second() -> str:
        """Record."""
        order.append("second")
        return "2"

    config = NeuronTurnConfig(parallel_tools=False)
    script = [calls(call("c1", "first"), call("c2", "second")), answer("ok")]
    turn, _ = build(script, tools=[first, second], config=config)
    await turn.execute(ask())
    assert order == ["first", "second"]


async def test_all_results_of_a_round_go_back_as_one_user_message() -> None:
    script = [calls(call("c1", "add", a=1, b=1), call("c2", "add", a=2, b=2)), answer("ok")]
    turn, provider = build(script)
    await turn.execute(ask())
    messages = provider.requests[1].messages
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert [r.content for r in messages[-1].content] == ["2", "4"]  # type: ignore[union-attr]
