"""Code Interpreter's container fee, which no Responses API answer says: counted and warned of."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from genai_prices import Usage, calc_price
from moneyed import Money

from layer0 import TurnInput
from neuron_tool import tool
from neuron_turn import CodeExecution, NeuronTurn, NeuronTurnConfig, WebSearch
from tests.unpriced_searches import unpriced_code_executions, warnings_of

from ._responses_support import ANSWERED, function_call, message, mocked, response, sse, usage
from ._support import json_response, request
from .test_responses_streaming import CREATED, collect, text_events

INPUT, OUTPUT = 2000, 500
USAGE = usage(INPUT, OUTPUT)
CONTAINER = "cntr_6923a1b2c3d4e5f60718293a4b5c6d7e"


def run(item_id: str, code: str, *, status: str = "completed") -> dict[str, Any]:
    """A `code_interpreter_call` output item, shaped as the API sends it."""
    return {
        "type": "code_interpreter_call",
        "id": item_id,
        "status": status,
        "code": code,
        "container_id": CONTAINER,
        "outputs": None,
    }


RUNS = (run("ci_1", "sum(range(10))"), run("ci_2", "sum(range(100))"))


def tokens_price(model: str = ANSWERED) -> Money:
    """genai-prices' price of `USAGE`'s tokens on `model`: all a code run's answer costs."""
    tokens = Usage(input_tokens=INPUT, output_tokens=OUTPUT)
    return Money(calc_price(tokens, model, provider_id="openai").total_price, "USD")


async def test_each_code_interpreter_call_is_reported_and_the_cost_is_the_tokens_alone() -> None:
    body = response(*RUNS, message("45 and 4950."), usage=USAGE)
    provider, _ = mocked(json_response(body))

    answer = await provider.complete(request(model="gpt-5-mini", hosted_tools=[CodeExecution()]))

    assert answer.cost == tokens_price()
    assert answer.unpriced_code_executions == 2
    assert answer.unpriced_web_searches == 0


async def test_an_answer_that_ran_no_code_reports_none() -> None:
    searched = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": None}
    body = response(searched, message("Found."), usage=USAGE)
    provider, _ = mocked(json_response(body))

    answer = await provider.complete(
        request(model="gpt-5-mini", hosted_tools=[WebSearch(), CodeExecution()])
    )

    assert answer.unpriced_code_executions == 0


def code_events(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of one code run at `index`: added, the code in pieces, run, done."""
    opened = {**item, "status": "in_progress", "code": ""}
    named = {"output_index": index, "item_id": item["id"]}
    code = item["code"]
    return [
        {"type": "response.output_item.added", "output_index": index, "item": opened},
        {"type": "response.code_interpreter_call.in_progress", **named},
        {"type": "response.code_interpreter_call_code.delta", **named, "delta": code[:4]},
        {"type": "response.code_interpreter_call_code.delta", **named, "delta": code[4:]},
        {"type": "response.code_interpreter_call_code.done", **named, "code": code},
        {"type": "response.code_interpreter_call.interpreting", **named},
        {"type": "response.code_interpreter_call.completed", **named},
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


@pytest.mark.parametrize("terminal_output", [True, False], ids=["completed-event", "done-events"])
async def test_a_streamed_answer_reports_its_code_runs_as_a_whole_one_does(
    terminal_output: bool,
) -> None:
    running = [event for index, item in enumerate(RUNS) for event in code_events(index, item)]
    answering = [
        {**event, "output_index": 2} if "output_index" in event else event
        for event in text_events("45 and ", "4950.")
    ]
    # A compatible server may end with an empty `output`: the done items are read instead.
    output = [*RUNS, message("45 and 4950.")] if terminal_output else []
    done = {"type": "response.completed", "response": response(output=output, usage=USAGE)}
    provider, _ = mocked(sse(CREATED, *running, *answering, done))

    _, answer = await collect(provider, request(model="gpt-5-mini", hosted_tools=[CodeExecution()]))

    assert [call.name for call in answer.hosted_calls] == ["code_execution", "code_execution"]
    assert answer.cost == tokens_price()
    assert answer.unpriced_code_executions == 2


async def test_a_self_hosted_servers_code_runs_cost_nothing_as_its_tokens_do() -> None:
    body = response(*RUNS, message("45 and 4950."), usage=USAGE)
    local, _ = mocked(json_response(body), base_url="http://localhost:8000/v1")

    answer = await local.complete(request(model="gpt-5-mini", hosted_tools=[CodeExecution()]))

    assert answer.cost == Money(Decimal(0), "USD")
    assert answer.unpriced_code_executions == 0


async def test_behind_a_gateway_with_prices_code_runs_are_counted_never_free() -> None:
    body = response(*RUNS, message("45 and 4950."), usage=USAGE)
    own_prices = {"gpt-5-mini": {"input_mtok": "1", "output_mtok": "2"}}
    gateway, _ = mocked(
        json_response(body), base_url="https://gateway.example/v1", prices=own_prices
    )

    answer = await gateway.complete(request(model="gpt-5-mini", hosted_tools=[CodeExecution()]))

    assert answer.cost is not None and answer.cost.amount > 0
    assert answer.unpriced_code_executions == len(RUNS)


@tool
def look_up(term: str) -> str:
    """Look a term up in the glossary."""
    return f"{term}: a sum"


async def test_a_turn_warns_of_code_runs_at_once_and_in_all() -> None:
    ran = response(*RUNS, function_call("call_1", "look_up", '{"term":"sum"}'), usage=USAGE)
    answered = response(run("ci_3", "sum(range(1000))"), message("499500."), usage=USAGE)
    provider, _ = mocked(json_response(ran), json_response(answered))
    config = NeuronTurnConfig(model="gpt-5-mini", hosted_tools=(CodeExecution(),))
    turn = NeuronTurn(provider, tools=[look_up], config=config)

    output = await turn.execute(TurnInput(message="Sum them.", trigger="user"))

    assert output.metadata.cost == tokens_price() + tokens_price()  # no container fee in it
    assert warnings_of(output) == unpriced_code_executions(ANSWERED, 2, 3)
