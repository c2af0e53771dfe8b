"""Web searches a `prices=` entry has no fee for: genai-prices' fee, or a warning, never $0."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from moneyed import Money

from layer0 import TurnInput
from neuron_tool import tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, WebSearch
from tests.unpriced_searches import unpriced_searches, warnings_of

from ._support import ANSWERED, MODEL, FakeApi, message_json, reply, request, usage_json
from .test_hosted_tools import ANSWER, SEARCH_CALL, SEARCH_RESULT

TOKENS = {"input_mtok": "1", "output_mtok": "5"}
"""A `prices=` entry's token prices: 1000 * 1 + 100 * 5 per million tokens, $0.0015."""
OWN_MODEL = "claude-acme-ft"
"""A model genai-prices does not know, priced only by its `prices=` entry."""


def searched(model: str = ANSWERED, searches: int = 2) -> dict[str, Any]:
    """An answer of `model` whose usage counts `searches` web searches."""
    usage = usage_json(1000, 100, server_tool_use={"web_search_requests": searches})
    return message_json([SEARCH_CALL, SEARCH_RESULT, ANSWER], model=model, usage=usage)


async def test_a_prices_entry_without_a_search_fee_takes_genai_prices_fee_for_the_model() -> None:
    api = FakeApi(reply(searched()))
    async with api.provider(prices={MODEL: TOKENS}) as provider:
        answer = await provider.complete(request())

    # The entry's tokens, then genai-prices' $10 per 1,000 searches for Claude Haiku 4.5.
    assert answer.cost == Money(Decimal("0.0215"), "USD")
    assert answer.unpriced_web_searches == 0


async def test_searches_of_a_model_no_price_covers_keep_the_token_cost_and_are_reported() -> None:
    api = FakeApi(reply(searched(OWN_MODEL)))
    with_fee = {OWN_MODEL: {**TOKENS, "web_searches_kcount": "25"}}
    async with api.provider(model=OWN_MODEL, prices={OWN_MODEL: TOKENS}) as provider:
        answer = await provider.complete(request(model=OWN_MODEL))
    async with api.provider(model=OWN_MODEL, prices=with_fee) as provider:
        priced = await provider.complete(request(model=OWN_MODEL))

    assert answer.cost == Money(Decimal("0.0015"), "USD")
    assert answer.unpriced_web_searches == 2
    assert priced.cost == Money(Decimal("0.0515"), "USD")  # the entry's own fee: 2 * 25 / 1,000
    assert priced.unpriced_web_searches == 0


async def test_searches_genai_prices_has_no_fee_for_are_reported_not_priced_at_zero() -> None:
    old = "claude-3-haiku-20240307"  # genai-prices lists its tokens, not a search fee
    api = FakeApi(reply(searched(old)))
    async with api.provider(model=old) as provider:
        answer = await provider.complete(request(model=old))

    # 1000 * 0.25 + 100 * 1.25 per million tokens.
    assert answer.cost == Money(Decimal("0.000375"), "USD")
    assert answer.unpriced_web_searches == 2


async def test_a_paused_call_reports_the_unpriced_searches_of_all_its_parts() -> None:
    usage = usage_json(1000, 100, server_tool_use={"web_search_requests": 1})
    paused = message_json(
        [SEARCH_CALL, SEARCH_RESULT], stop_reason="pause_turn", model=OWN_MODEL, usage=usage
    )
    api = FakeApi(reply(paused), reply(searched(OWN_MODEL, searches=2)))
    async with api.provider(model=OWN_MODEL, prices={OWN_MODEL: TOKENS}) as provider:
        answer = await provider.complete(request(model=OWN_MODEL, hosted_tools=[WebSearch()]))

    assert answer.cost == Money(Decimal("0.003"), "USD")
    assert answer.unpriced_web_searches == 3


@tool
def look_up(term: str) -> str:
    """Look a term up in the glossary."""
    return f"{term}: a protocol"


async def test_a_turn_warns_of_searches_no_price_covers_at_once_and_in_all() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "look_up", "input": {"term": "layer0"}}
    usage = usage_json(1000, 100, server_tool_use={"web_search_requests": 2})
    first = message_json(
        [SEARCH_CALL, SEARCH_RESULT, call], stop_reason="tool_use", model=OWN_MODEL, usage=usage
    )
    api = FakeApi(reply(first), reply(searched(OWN_MODEL, searches=1)))
    config = NeuronTurnConfig(model=OWN_MODEL, hosted_tools=(WebSearch(),))
    async with api.provider(model=OWN_MODEL, prices={OWN_MODEL: TOKENS}) as provider:
        turn = NeuronTurn(provider, tools=[look_up], config=config)
        output = await turn.execute(TurnInput(message="What is layer0?", trigger="user"))

    assert output.metadata.cost == Money(Decimal("0.003"), "USD")  # the tokens of two calls
    assert warnings_of(output) == unpriced_searches(OWN_MODEL, 2, 3)
