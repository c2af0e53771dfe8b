"""The Responses API's hosted web search fees in each call's cost, and so in a turn's budget."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from genai_prices import Usage, calc_price
from moneyed import Money

from layer0 import TurnInput
from neuron_provider_openai._pricing import Pricer
from neuron_tool import tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, WebSearch
from tests.unpriced_searches import unpriced_searches, warnings_of

from ._responses_support import ANSWERED, function_call, message, mocked, response, sse, usage
from ._support import json_response, request
from .test_responses_streaming import CREATED, collect, text_events

INPUT, OUTPUT, CACHED = 2000, 500, 1024
USAGE = usage(INPUT, OUTPUT, cached=CACHED)


def search(item_id: str, action: dict[str, Any] | None) -> dict[str, Any]:
    """A finished `web_search_call` output item (without `action` when it is None)."""
    item: dict[str, Any] = {"type": "web_search_call", "id": item_id, "status": "completed"}
    if action is not None:
        item["action"] = action
    return item


SEARCHES = (
    search("ws_1", {"type": "search", "query": "layer0 protocol"}),
    search("ws_2", {"type": "search", "query": "layer0 spec"}),
)


def genai_price(web_searches: int | None = None) -> Money:
    """genai-prices' own price of `USAGE` on the answered model, with `web_searches`."""
    tokens = Usage(
        input_tokens=INPUT,
        output_tokens=OUTPUT,
        cache_read_tokens=CACHED,
        web_searches=web_searches,
    )
    return Money(calc_price(tokens, ANSWERED, provider_id="openai").total_price, "USD")


async def test_an_answer_with_two_searches_costs_genai_prices_price_for_two_searches() -> None:
    body = response(*SEARCHES, message("layer0 is a protocol."), usage=USAGE)
    provider, _ = mocked(json_response(body))

    answer = await provider.complete(request(hosted_tools=[WebSearch()]))

    assert answer.cost == genai_price(web_searches=2)
    assert answer.cost > genai_price()  # the tokens alone
    assert answer.cost - genai_price() == Money(Decimal("0.02"), "USD")  # $10 per 1,000


@pytest.mark.parametrize("terminal_output", [True, False], ids=["completed-event", "done-events"])
async def test_a_streamed_answer_with_two_searches_costs_the_same(terminal_output: bool) -> None:
    searching = [
        event
        for index, item in enumerate(SEARCHES)
        for event in (
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "status": "in_progress"},
            },
            {"type": "response.web_search_call.completed", "output_index": index},
            {"type": "response.output_item.done", "output_index": index, "item": item},
        )
    ]
    answering = [
        {**event, "output_index": 2} if "output_index" in event else event
        for event in text_events("layer0 is ", "a protocol.")
    ]
    # A compatible server may end with an empty `output`: the done items are read instead.
    output = [*SEARCHES, message("layer0 is a protocol.")] if terminal_output else []
    done = {"type": "response.completed", "response": response(output=output, usage=USAGE)}
    provider, _ = mocked(sse(CREATED, *searching, *answering, done))

    _, answer = await collect(provider, request(hosted_tools=[WebSearch()]))

    assert len(answer.hosted_calls) == 2
    assert answer.cost == genai_price(web_searches=2)
    assert answer.cost > genai_price()


async def test_every_web_search_call_item_is_billed_whatever_its_action() -> None:
    items = (
        search("ws_1", {"type": "search", "query": "layer0"}),
        search("ws_2", {"type": "open_page", "url": "https://example.com/layer0"}),
        search("ws_3", {"type": "find_in_page", "url": "https://example.com", "pattern": "l0"}),
        search("ws_4", None),
    )
    provider, _ = mocked(json_response(response(*items, message("Found."), usage=USAGE)))

    answer = await provider.complete(request(hosted_tools=[WebSearch()]))

    assert answer.cost == genai_price(web_searches=4)


@pytest.mark.parametrize(
    "output",
    [
        [message("Hi")],
        [{"type": "code_interpreter_call", "id": "ci_1", "code": "2**10"}, message("1024")],
    ],
    ids=["no-hosted-call", "code-only"],
)
async def test_an_answer_with_no_search_is_priced_as_before_on_the_flat_path(
    output: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_general_path(*args: object, **kwargs: object) -> Decimal | None:
        raise AssertionError("an answer without a search went through calc_price")

    monkeypatch.setattr(Pricer, "_calc_price", no_general_path)
    provider, _ = mocked(json_response(response(*output, usage=USAGE)))

    answer = await provider.complete(request())

    assert answer.cost == genai_price()


TOKENS = {"input_mtok": "1", "output_mtok": "2", "cache_read_mtok": "0.5"}
"""A `prices=` entry's token prices: (2000 - 1024) * 1 + 1024 * 0.5 + 500 * 2 per
million tokens, $0.002488 for `USAGE`."""


async def test_a_prices_entry_bills_searches_at_its_own_fee() -> None:
    body = response(*SEARCHES, message("layer0 is a protocol."), usage=USAGE)
    priced, _ = mocked(
        json_response(body), prices={"gpt-5-mini": {**TOKENS, "web_searches_kcount": "25"}}
    )

    with_fee = await priced.complete(request(model="gpt-5-mini"))

    assert with_fee.cost == Money(Decimal("0.052488"), "USD")  # then 2 * 25 / 1,000
    assert with_fee.unpriced_web_searches == 0


async def test_a_prices_entry_without_a_search_fee_takes_genai_prices_fee_for_the_model() -> None:
    body = response(*SEARCHES, message("layer0 is a protocol."), usage=USAGE)
    provider, _ = mocked(json_response(body), prices={"gpt-5-mini": TOKENS})

    answer = await provider.complete(request(model="gpt-5-mini"))

    # The entry's tokens, then genai-prices' $10 per 1,000 searches for gpt-5-mini.
    assert answer.cost == Money(Decimal("0.022488"), "USD")
    assert answer.unpriced_web_searches == 0


async def test_searches_of_a_model_no_price_covers_keep_the_token_cost_and_are_reported() -> None:
    body = response(*SEARCHES, message("Found."), usage=USAGE, model="ft:gpt-5-mini:acme:1")
    provider, _ = mocked(json_response(body), prices={"ft:gpt-5-mini:acme:1": TOKENS})

    answer = await provider.complete(request(model="ft:gpt-5-mini:acme:1"))

    assert answer.cost == Money(Decimal("0.002488"), "USD")
    assert answer.unpriced_web_searches == 2


async def test_searches_genai_prices_has_no_fee_for_are_reported_not_priced_at_zero() -> None:
    body = response(*SEARCHES, message("Found."), usage=USAGE, model="gpt-3.5-turbo")
    provider, _ = mocked(json_response(body))

    answer = await provider.complete(request(model="gpt-3.5-turbo"))

    tokens = Usage(input_tokens=INPUT, output_tokens=OUTPUT, cache_read_tokens=CACHED)
    assert answer.cost == Money(
        calc_price(tokens, "gpt-3.5-turbo", provider_id="openai").total_price, "USD"
    )
    assert answer.unpriced_web_searches == 2


async def test_a_self_hosted_server_costs_nothing_and_a_prices_entry_there_reports_searches() -> (
    None
):
    body = response(*SEARCHES, message("Found."), usage=USAGE)
    local = "http://localhost:8000/v1"
    free, _ = mocked(json_response(body), base_url=local)
    priced, _ = mocked(json_response(body), base_url=local, prices={ANSWERED: TOKENS})

    unpriced_server = await free.complete(request(model="gpt-5-mini"))
    priced_tokens = await priced.complete(request(model="gpt-5-mini"))

    assert unpriced_server.cost == Money(Decimal(0), "USD")
    assert unpriced_server.unpriced_web_searches == 0
    # Prices are not looked up for a custom URL: no fee is taken from genai-prices.
    assert priced_tokens.cost == Money(Decimal("0.002488"), "USD")
    assert priced_tokens.unpriced_web_searches == 2


async def test_a_turn_warns_of_searches_no_price_covers_at_once_and_in_all() -> None:
    model = "ft:gpt-5-mini:acme:1"
    searched = response(
        *SEARCHES,
        function_call("call_1", "look_up", '{"term":"layer0"}'),
        usage=USAGE,
        model=model,
    )
    answered = response(*SEARCHES, message("layer0 is a protocol."), usage=USAGE, model=model)
    provider, _ = mocked(json_response(searched), json_response(answered), prices={model: TOKENS})
    turn = NeuronTurn(
        provider, tools=[look_up], config=NeuronTurnConfig(model=model, hosted_tools=(WebSearch(),))
    )

    output = await turn.execute(TurnInput(message="What is layer0?", trigger="user"))

    assert output.metadata.cost == Money(Decimal("0.004976"), "USD")  # the tokens of two calls
    assert warnings_of(output) == unpriced_searches(model, 2, 4)


def test_a_prices_entry_takes_a_search_fee_but_not_as_a_float() -> None:
    mocked(prices={"m": {"input_mtok": "1", "output_mtok": "1", "web_searches_kcount": "10"}})
    with pytest.raises(ValueError, match=r"\['web_searches_kcount'\] must be a decimal string"):
        mocked(prices={"m": {"input_mtok": "1", "output_mtok": "1", "web_searches_kcount": 10.0}})


@tool
def look_up(term: str) -> str:
    """Look a term up in the glossary."""
    return f"{term}: a protocol"


async def test_a_turn_whose_max_cost_only_the_search_fees_cross_ends_with_the_limit_reached() -> (
    None
):
    searched = response(
        *SEARCHES, function_call("call_1", "look_up", '{"term":"layer0"}'), usage=USAGE
    )
    provider, recorder = mocked(json_response(searched), json_response(response()))
    budget = Money(Decimal("0.01"), "USD")
    assert genai_price() < budget <= genai_price(web_searches=2)  # only the fees cross it
    config = NeuronTurnConfig(hosted_tools=(WebSearch(),), max_cost=budget)
    turn = NeuronTurn(provider, tools=[look_up], config=config)

    output = await turn.execute(TurnInput(message="What is layer0?", trigger="user"))

    assert output.exit_reason == "budget_exhausted"
    assert len(recorder.requests) == 1  # no call after the one that searched
    assert output.metadata.cost == genai_price(web_searches=2)
