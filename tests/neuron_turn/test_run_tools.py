"""`run(tools=...)`: tools of one run, beside the turn's own."""

from __future__ import annotations

import pytest

from neuron_tool import FunctionTool, RunContext, ToolRegistrationError, tool, tool_source
from neuron_turn import (
    ApprovalPolicy,
    Decision,
    NeuronTurn,
    NeuronTurnConfig,
    ToolResultPart,
    UnsupportedStrictToolsError,
)
from neuron_turn.loop._blocking import run_blocking
from neuron_turn.testing import ScriptedProvider

from .support import add, answer, call, calls


@tool
async def lookup(order: str) -> str:
    """The status of an order."""
    return f"order {order}: shipped"


def _offered(provider: ScriptedProvider, request: int = 0) -> list[str]:
    return [schema.name for schema in provider.requests[request].tools]


async def test_a_runs_tools_are_offered_and_run_for_that_run_only() -> None:
    provider = ScriptedProvider(
        [calls(call("c1", "lookup", order="A7")), answer("shipped"), answer("hi")]
    )
    turn = NeuronTurn(provider, tools=[add])

    first = await turn.run("where is A7?", tools=[lookup])
    await turn.run("hello")

    assert first.output == "shipped"
    assert [record.name for record in first.turn_output.metadata.tools_called] == ["lookup"]
    assert "lookup" in _offered(provider, 0) and "add" in _offered(provider, 0)
    assert "lookup" not in _offered(provider, 2)


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (FunctionTool(lambda a, b: a - b, name="add"), "the turn has a tool of this name"),
        (FunctionTool(lambda key, value: None, name="write_memory"), "the loop's own"),
        ("not a tool", "not a tool"),
    ],
)
async def test_a_run_tool_that_cannot_join_the_turns_is_refused_before_any_model_call(
    given: object, named: str
) -> None:
    provider = ScriptedProvider([answer("never")])
    turn = NeuronTurn(provider, tools=[add])

    with pytest.raises(ToolRegistrationError, match=named):
        await turn.run("hi", tools=[given])  # type: ignore[list-item]

    assert provider.requests == []


async def test_a_strict_run_tool_over_a_provider_without_strict_mode_is_refused() -> None:
    provider = ScriptedProvider([answer("never")])
    strict = FunctionTool(lambda key: key, name="exact", strict=True)

    with pytest.raises(UnsupportedStrictToolsError, match="exact"):
        await NeuronTurn(provider).run("hi", tools=[strict])

    assert provider.requests == []


async def test_a_runs_tool_source_gives_tools_made_for_the_runs_deps() -> None:
    provider = ScriptedProvider([calls(call("c1", "whoami")), answer("done")])

    @tool_source
    def per_user(context: RunContext[str]) -> list[FunctionTool]:
        return [FunctionTool(lambda: f"you are {context.deps}", name="whoami")]

    result = await NeuronTurn(provider).run("who am I?", tools=[per_user], deps="ada")

    assert result.turn_output.metadata.tools_called[0].name == "whoami"
    assert "you are ada" in str(result.new_messages()[2].content[0])


def test_run_sync_stream_and_stream_sync_take_tools_too() -> None:
    provider = ScriptedProvider([answer("a"), answer("b"), answer("c")])
    turn = NeuronTurn(provider)

    turn.run_sync("hi", tools=[lookup])

    async def streamed() -> None:
        events = turn.stream("hi", tools=[lookup])
        _ = [event async for event in events]

    run_blocking(streamed())
    list(turn.stream_sync("hi", tools=[lookup]))
    assert [_offered(provider, n) for n in range(3)] == [["lookup"]] * 3


async def test_inside_an_override_a_runs_tools_join_the_overrides_tools() -> None:
    turn = NeuronTurn(ScriptedProvider([]), tools=[add])
    scripted = ScriptedProvider([answer("ok")])

    with turn.override(provider=scripted, tools=[]):
        await turn.run("hi", tools=[lookup])

    assert _offered(scripted) == ["lookup"]


async def test_a_run_paused_on_its_own_tool_resumes_in_code_given_it_again() -> None:
    config = NeuronTurnConfig(approval=ApprovalPolicy.of(["lookup"]))
    provider = ScriptedProvider([calls(call("c1", "lookup", order="A7")), answer("shipped")])
    turn = NeuronTurn(provider, config=config)

    paused = await turn.run("where is A7?", tools=[lookup])
    done = await turn.run(
        decisions=[Decision.approve("c1")], message_history=paused.all_messages(), tools=[lookup]
    )

    assert paused.exit_reason != "complete" and done.output == "shipped"
    assert done.turn_output.metadata.tools_called[0].name == "lookup"


async def test_a_resume_not_given_the_runs_tool_again_answers_its_call_as_unknown() -> None:
    config = NeuronTurnConfig(approval=ApprovalPolicy.of(["lookup"]))
    provider = ScriptedProvider([calls(call("c1", "lookup", order="A7")), answer("sorry")])
    turn = NeuronTurn(provider, config=config)

    paused = await turn.run("where is A7?", tools=[lookup])
    done = await turn.run(decisions=[Decision.approve("c1")], message_history=paused.all_messages())

    (result,) = done.new_messages()[0].content
    assert isinstance(result, ToolResultPart) and result.is_error
    assert "no tool named 'lookup'" in result.content
