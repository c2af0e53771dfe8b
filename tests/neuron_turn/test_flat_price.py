"""The shared flat-price plan: genai-prices' own sum for a flat price, or None to leave it to it.

The providers' tests check it against every model they price; these check the
plan itself on prices no provider data holds.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from genai_prices import Usage
from genai_prices.types import ModelPrice, Tier, TieredPrices

from neuron_turn.loop.flat_price import plan_for

COUNTS = [
    {"input_tokens": 0, "output_tokens": 0},
    {"input_tokens": 2000, "output_tokens": 628, "cache_read_tokens": 1024},
    {"input_tokens": 10**30, "output_tokens": 7, "cache_read_tokens": 10**29},
    {"output_tokens": 3},
]


@pytest.mark.parametrize(
    "prices",
    [
        {"input_mtok": "0.3", "output_mtok": "2.5"},
        {"input_mtok": "0.3", "output_mtok": "2.5", "cache_read_mtok": "0.03"},
        {
            "input_mtok": "0.3",
            "output_mtok": "2.5",
            "cache_read_mtok": "0.03",
            "input_audio_mtok": "1",
            "cache_audio_read_mtok": "0.1",
            "web_searches_kcount": "35",
        },
        {"input_mtok": "0", "output_mtok": "0.000000001", "requests_kcount": "1.5"},
    ],
)
def test_a_flat_price_totals_the_digits_genai_prices_gives(prices: dict[str, str]) -> None:
    price = ModelPrice(**{key: Decimal(value) for key, value in prices.items()})
    plan = plan_for(price)

    assert plan is not None
    for counts in COUNTS:
        total = plan.total(counts)
        assert repr(total) == repr(price.calc_price(Usage(**counts))["total_price"]), counts


def test_the_plan_is_read_once_per_price_object() -> None:
    price = ModelPrice(input_mtok=Decimal(1), output_mtok=Decimal(2))

    assert plan_for(price) is plan_for(price)


def test_parts_larger_than_their_whole_are_left_to_genai_prices() -> None:
    plan = plan_for(ModelPrice(input_mtok=Decimal(1), cache_read_mtok=Decimal("0.1")))

    assert plan is not None
    assert plan.total({"input_tokens": 10, "cache_read_tokens": 20}) is None


@pytest.mark.parametrize(
    "price",
    [
        ModelPrice(
            input_mtok=TieredPrices(Decimal(1), [Tier(200_000, Decimal(2))]),
            output_mtok=Decimal(3),
        ),
        ModelPrice(input_mtok=Decimal(-1), output_mtok=Decimal(3)),
        ModelPrice(input_mtok=Decimal("NaN"), output_mtok=Decimal(3)),
        # Audio priced with cache reads but no audio cache price: genai-prices refuses.
        ModelPrice(
            input_mtok=Decimal(1), cache_read_mtok=Decimal("0.1"), input_audio_mtok=Decimal(2)
        ),
        {"input_mtok": Decimal(1)},
    ],
    ids=["tiered", "negative", "nan", "missing-join-price", "not-a-model-price"],
)
def test_prices_that_are_not_flat_have_no_plan(price: object) -> None:
    assert plan_for(price) is None
