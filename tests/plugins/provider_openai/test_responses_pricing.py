"""The Responses provider's cost: the Chat provider's pricing over the Responses usage fields."""

from __future__ import annotations

from decimal import Decimal

import genai_prices
from moneyed import Money

from neuron_turn.loop.provider import TokenUsage

from ._responses_support import message, mocked, response, usage
from ._support import json_response, request

BODY = response(message("Hi"), usage=usage(2000, 500, cached=1024, reasoning=128))


async def test_usage_is_what_genai_prices_reads_from_the_responses_flavour() -> None:
    provider, _ = mocked(json_response(BODY))
    answer = await provider.complete(request())
    extracted = genai_prices.extract_usage(BODY, provider_id="openai", api_flavor="responses")
    assert answer.usage == TokenUsage(
        extracted.usage.input_tokens or 0,
        extracted.usage.output_tokens or 0,
        extracted.usage.cache_read_tokens,
    )


async def test_cost_is_genai_prices_price_for_the_answered_model() -> None:
    provider, _ = mocked(json_response(BODY))
    answer = await provider.complete(request())
    extracted = genai_prices.extract_usage(BODY, provider_id="openai", api_flavor="responses")
    expected = genai_prices.calc_price(extracted.usage, BODY["model"], provider_id="openai")
    assert answer.cost == Money(expected.total_price, "USD")
    assert answer.cost is not None and answer.cost.amount > 0


async def test_prices_option_wins_and_a_custom_base_url_costs_nothing_unless_priced() -> None:
    prices = {"gpt-5-mini": {"input_mtok": "1", "output_mtok": "2", "cache_read_mtok": "0.5"}}
    provider, _ = mocked(json_response(BODY), prices=prices)
    answer = await provider.complete(request(model="gpt-5-mini"))  # priced by the asked model
    # (2000 - 1024) * 1 + 1024 * 0.5 + 500 * 2 per million tokens.
    assert answer.cost == Money(Decimal("0.002488"), "USD")
    local, _ = mocked(json_response(BODY), base_url="http://localhost:8000/v1")
    assert (await local.complete(request())).cost == Money(Decimal(0), "USD")


async def test_an_unknown_model_on_openai_has_no_cost() -> None:
    provider, _ = mocked(json_response(response(model="not-a-model-xyz")))
    assert (await provider.complete(request())).cost is None
