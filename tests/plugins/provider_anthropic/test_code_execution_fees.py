"""Code execution's container time, which no response says: counted and warned of, never $0."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from moneyed import Money

from layer0 import TurnInput
from neuron_tool import tool
from neuron_turn import CodeExecution, NeuronTurn, NeuronTurnConfig, WebSearch
from tests.plugins.chunked import collect
from tests.unpriced_searches import unpriced_code_executions, warnings_of

from ._support import ANSWERED, FakeApi, message_json, reply, request, usage_json
from .test_hosted_tools import ANSWER, SEARCH_CALL, SEARCH_RESULT
from .test_stream import END, START, block_start, delta, message_delta, sse, stop

# The blocks of the code_execution_20250825 tool as Anthropic's code execution tool
# docs show them: a `server_tool_use` of `bash_code_execution` or
# `text_editor_code_execution`, each followed by its own result block.
BASH = {
    "type": "server_tool_use",
    "id": "srvtoolu_01B3C4D5E6F7G8H9I0J1K2L3",
    "name": "bash_code_execution",
    "input": {"command": "python -c 'print(sum(range(10)))'"},
}
BASH_RESULT = {
    "type": "bash_code_execution_tool_result",
    "tool_use_id": "srvtoolu_01B3C4D5E6F7G8H9I0J1K2L3",
    "content": {
        "type": "bash_code_execution_result",
        "stdout": "45\n",
        "stderr": "",
        "return_code": 0,
    },
}
EDIT = {
    "type": "server_tool_use",
    "id": "srvtoolu_01C4D5E6F7G8H9I0J1K2L3M4",
    "name": "text_editor_code_execution",
    "input": {"command": "create", "path": "sum.py", "file_text": "print(sum(range(10)))\n"},
}
EDIT_RESULT = {
    "type": "text_editor_code_execution_tool_result",
    "tool_use_id": "srvtoolu_01C4D5E6F7G8H9I0J1K2L3M4",
    "content": {"type": "text_editor_code_execution_result", "is_file_update": False},
}
SUM = {"type": "text", "text": "The sum is 45."}
CONTAINER = {"id": "container_011CPR5CNjB747bTd36fQLFk", "expires_at": "2026-11-29T18:13:31Z"}
TOKENS = Money(Decimal("0.0015"), "USD")
"""Claude Haiku 4.5's price of 1000 input and 100 output tokens, $1 and $5 per million."""


def ran(*blocks: dict[str, Any], calls: int, **fields: Any) -> dict[str, Any]:
    """An answer whose usage counts `calls` code execution requests, with its container."""
    usage = usage_json(1000, 100, server_tool_use={"code_execution_requests": calls})
    return {**message_json(blocks, usage=usage, **fields), "container": CONTAINER}


async def test_each_code_execution_call_is_reported_and_the_cost_is_the_tokens_alone() -> None:
    api = FakeApi(reply(ran(EDIT, EDIT_RESULT, BASH, BASH_RESULT, SUM, calls=2)))
    async with api.provider() as provider:
        answer = await provider.complete(request(hosted_tools=[CodeExecution()]))

    assert answer.cost == TOKENS
    assert answer.unpriced_code_executions == 2


async def test_an_answer_that_ran_no_code_reports_none() -> None:
    usage = usage_json(1000, 100, server_tool_use={"web_search_requests": 1})
    api = FakeApi(reply(message_json([SEARCH_CALL, SEARCH_RESULT, ANSWER], usage=usage)))
    async with api.provider() as provider:
        answer = await provider.complete(request(hosted_tools=[WebSearch(), CodeExecution()]))

    assert answer.unpriced_code_executions == 0
    assert answer.cost == TOKENS + Money(Decimal("0.01"), "USD")  # the search's $10 per 1,000


async def test_a_paused_call_reports_the_code_executions_of_all_its_parts() -> None:
    api = FakeApi(
        reply(ran(EDIT, EDIT_RESULT, calls=1, stop_reason="pause_turn")),
        reply(ran(BASH, BASH_RESULT, SUM, calls=1)),
    )
    async with api.provider() as provider:
        answer = await provider.complete(request(hosted_tools=[CodeExecution()]))

    assert answer.cost == TOKENS + TOKENS
    assert answer.unpriced_code_executions == 2


def streamed(*blocks: dict[str, Any]) -> Any:
    """A streamed answer of `blocks`: a server tool's input arrives as JSON deltas."""
    events: list[dict[str, Any]] = [START]
    for index, block in enumerate(blocks):
        if block["type"] == "server_tool_use":
            events.append(block_start(index, {**block, "input": {}}))
            partial = json.dumps(block["input"])
            events.append(delta(index, type="input_json_delta", partial_json=partial))
        elif block["type"] == "text":
            events.append(block_start(index, {"type": "text", "text": ""}))
            events.append(delta(index, type="text_delta", text=block["text"]))
        else:
            events.append(block_start(index, block))
        events.append(stop(index))
    usage = {"output_tokens": 9, "server_tool_use": {"code_execution_requests": 1}}
    events += [message_delta("end_turn", **usage), END]
    return reply(sse(*events), headers={"content-type": "text/event-stream"})


async def test_a_streamed_answer_reports_its_code_executions_as_a_whole_one_does() -> None:
    api = FakeApi(streamed(BASH, BASH_RESULT, SUM))
    async with api.provider() as provider:
        _, answer = await collect(provider.stream(request(hosted_tools=[CodeExecution()])))

    assert answer.hosted_calls[0].name == "code_execution"
    assert answer.cost is not None and answer.cost.amount > 0
    assert answer.unpriced_code_executions == 1


@tool
def look_up(term: str) -> str:
    """Look a term up in the glossary."""
    return f"{term}: a sum"


async def test_a_turn_warns_of_code_executions_at_once_and_in_all() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "look_up", "input": {"term": "sum"}}
    first = ran(EDIT, EDIT_RESULT, BASH, BASH_RESULT, call, calls=2, stop_reason="tool_use")
    api = FakeApi(reply(first), reply(ran(BASH, BASH_RESULT, SUM, calls=1)))
    config = NeuronTurnConfig(hosted_tools=(CodeExecution(),))
    async with api.provider() as provider:
        turn = NeuronTurn(provider, tools=[look_up], config=config)
        output = await turn.execute(TurnInput(message="Sum 0 to 9.", trigger="user"))

    assert output.metadata.cost == TOKENS + TOKENS  # the tokens of two calls, no container time
    assert warnings_of(output) == unpriced_code_executions(ANSWERED, 2, 3)


async def test_a_turn_whose_one_code_execution_is_its_only_one_warns_once() -> None:
    api = FakeApi(reply(ran(BASH, BASH_RESULT, SUM, calls=1)))
    config = NeuronTurnConfig(hosted_tools=(CodeExecution(),))
    async with api.provider() as provider:
        output = await NeuronTurn(provider, config=config).execute(
            TurnInput(message="Sum 0 to 9.", trigger="user")
        )

    assert warnings_of(output) == unpriced_code_executions(ANSWERED, 1, 1)[:1]
