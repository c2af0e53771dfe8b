from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from moneyed import Money

from neuron_provider_anthropic._pricing import Pricing

from ._support import ANSWERED, MODEL, usage_json


def cost(usage: dict[str, Any], model: str = ANSWERED, **overrides: Any) -> Money | None:
    return Pricing(overrides or None).cost(usage, model=model, requested=MODEL)


def test_haiku_4_5_is_priced_per_million_input_and_output_tokens() -> None:
    # claude-haiku-4-5: $1 / MTok in, $5 / MTok out.
    assert cost(usage_json(1_000_000, 200_000)) == Money(Decimal("2"), "USD")


def test_cost_is_exact_decimal_usd() -> None:
    price = cost(usage_json(412, 68))

    assert price is not None
    assert price.currency.code == "USD"
    assert price.amount == Decimal("0.000752")
    assert isinstance(price.amount, Decimal)


def test_cache_reads_and_writes_are_priced_at_their_own_rates() -> None:
    # Anthropic's input_tokens excludes cached tokens: 1M plain input ($1) + 1M cache
    # reads ($0.10) + 1M cache writes ($1.25) + 1M output ($5).
    usage = usage_json(
        1_000_000,
        1_000_000,
        cache_read_input_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
    )

    assert cost(usage) == Money(Decimal("7.35"), "USD")


def test_one_hour_cache_writes_are_priced_at_the_one_hour_rate() -> None:
    usage = usage_json(
        0,
        0,
        cache_creation_input_tokens=1_000_000,
        cache_creation={"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1_000_000},
    )

    assert cost(usage) == Money(Decimal("2"), "USD")


def test_unknown_model_costs_none() -> None:
    assert cost(usage_json(), model="totally-unknown-model") is None


def test_user_prices_override_for_a_model_genai_prices_does_not_know() -> None:
    prices = {"my-model": {"input_mtok": "0.5", "output_mtok": "1.5"}}

    price = Pricing(prices).cost(
        usage_json(2_000_000, 1_000_000), model="my-model", requested="my-model"
    )

    assert price == Money(Decimal("2.5"), "USD")


def test_user_prices_override_maintained_prices_of_the_answered_model() -> None:
    prices = {ANSWERED: {"input_mtok": "10", "output_mtok": "0"}}

    assert Pricing(prices).cost(usage_json(100_000, 5), model=ANSWERED, requested=MODEL) == Money(
        Decimal("1"), "USD"
    )


def test_user_prices_keyed_by_the_requested_alias_apply_to_the_answered_snapshot() -> None:
    prices = {MODEL: {"input_mtok": "3", "output_mtok": "3"}}

    price = Pricing(prices).cost(usage_json(1_000_000, 0), model=ANSWERED, requested=MODEL)

    assert price == Money(Decimal("3"), "USD")


def test_user_cache_read_price_applies_to_cache_reads() -> None:
    prices = {"m": {"input_mtok": "1", "output_mtok": "1", "cache_read_mtok": "0.25"}}
    usage = usage_json(0, 0, cache_read_input_tokens=4_000_000)

    assert Pricing(prices).cost(usage, model="m", requested="m") == Money(Decimal("1"), "USD")


def test_float_prices_are_refused() -> None:
    with pytest.raises(TypeError, match="float"):
        Pricing({"m": {"input_mtok": 0.5}})


@pytest.mark.parametrize("value", ["cheap", "-1", "NaN", True])
def test_prices_that_are_not_non_negative_decimals_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match="input_mtok"):
        Pricing({"m": {"input_mtok": value}})


def test_unknown_price_keys_are_refused_with_the_valid_keys() -> None:
    with pytest.raises(ValueError, match=r"input_tokens.*valid keys: cache_read_mtok"):
        Pricing({"m": {"input_tokens": "1"}})


def test_usage_genai_prices_cannot_read_gives_no_cost_and_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    usage = usage_json(10, 5, cache_read_input_tokens=-3)

    assert cost(usage) is None
    assert "cannot price a call" in caplog.text
