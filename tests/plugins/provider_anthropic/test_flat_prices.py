"""The flat-price path gives genai-prices' own price, to the digit, or leaves the call to it.

Every Anthropic model genai-prices knows is priced with every usage object
recorded in our cassettes and the shared corpus, plus shapes no recording
has (cache writes by duration, web searches, nulls, floats, negatives), both
ways: `genai_prices.calc_price(extract_usage(...))` and the flat path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import genai_prices
import pytest
import yaml
from genai_prices.data_snapshot import get_snapshot
from genai_prices.types import ModelPrice, TieredPrices

from neuron_provider_anthropic._flat_prices import model_prices, plan_for, usage_reader
from neuron_provider_anthropic._pricing import Pricing, _flat_cost
from tests.cassettes import CASSETTES, SHARED_CORPUS, body_values

from ._support import ANSWERED, MODEL, usage_json

PROVIDER = "anthropic"
REFUSED = "refused"


def _usages(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "usage" and isinstance(item, dict) and "output_tokens" in item:
                yield item
            yield from _usages(item)
    elif isinstance(value, list):
        for item in value:
            yield from _usages(item)


def _recorded_usages() -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for folder in (CASSETTES / "anthropic", SHARED_CORPUS / "anthropic"):
        for path in sorted(Path(folder).glob("*.yaml")):
            for interaction in yaml.safe_load(path.read_text())["interactions"]:
                response = interaction["response"]
                if "parsed_body" in response:
                    bodies = [response["parsed_body"]]
                else:
                    body = response.get("body", {}).get("string", "")
                    bodies = list(body_values(body)) if isinstance(body, str) else []
                for body in bodies:
                    for usage in _usages(body):
                        found[json.dumps(usage, sort_keys=True)] = usage
    return list(found.values())


RECORDED = _recorded_usages()
SHAPES: list[dict[str, Any]] = [
    usage_json(412, 68),
    {"input_tokens": 412, "output_tokens": 68},
    usage_json(1_000_000, 200_000, cache_read_input_tokens=3_000, cache_creation_input_tokens=7),
    usage_json(
        0,
        0,
        cache_creation_input_tokens=1_000_000,
        cache_creation={"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1_000_000},
    ),
    usage_json(
        5,
        9,
        cache_creation_input_tokens=300,
        cache_creation={"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
        cache_read_input_tokens=12_345,
        server_tool_use={"web_search_requests": 3},
        service_tier="standard",
    ),
    # 1h writes without the total they belong to: genai-prices refuses or infers.
    {"input_tokens": 5, "output_tokens": 1, "cache_creation": {"ephemeral_1h_input_tokens": 9}},
    # Parts larger than their whole: genai-prices refuses.
    usage_json(
        5,
        1,
        cache_creation_input_tokens=10,
        cache_creation={"ephemeral_5m_input_tokens": 8, "ephemeral_1h_input_tokens": 8},
    ),
    usage_json(7, 3, output_tokens_details={"thinking_tokens": 2}),
    usage_json(7, 3, cache_creation=None, server_tool_use=None, cache_read_input_tokens=None),
    usage_json(7, 3, cache_creation="odd", server_tool_use={"web_search_requests": "two"}),
    usage_json(7.5, 3),  # type: ignore[arg-type]
    usage_json(7, 3, cache_read_input_tokens=Decimal("2")),
    usage_json(True, 3),  # type: ignore[arg-type]
    usage_json(10, 5, cache_read_input_tokens=-3),
    {"output_tokens": 3},
    {"input_tokens": 3},
    {},
    {"input_tokens": 10**30, "output_tokens": 10**29 + 7},
]


def _models() -> list[str]:
    provider = get_snapshot().find_provider(None, PROVIDER, None)
    return sorted({model.id for model in provider.models} | {MODEL, ANSWERED, "not-a-model"})


MODELS = _models()


def _general(usage: dict[str, Any], model: str, price: ModelPrice | None = None) -> object:
    try:
        extracted = genai_prices.extract_usage({"usage": usage}, provider_id=PROVIDER).usage
        if price is not None:
            return price.calc_price(extracted)["total_price"]
        return genai_prices.calc_price(extracted, model, provider_id=PROVIDER).total_price
    except LookupError:
        return None
    except ValueError:
        return REFUSED


def _flat(usage: dict[str, Any], model: str, price: ModelPrice | None = None) -> object:
    try:
        return _flat_cost(usage, model, price)
    except LookupError:
        return None


def _same(flat: object, general: object) -> bool:
    # The flat path may only decline (None: the general path runs), never differ.
    if flat is None:
        return True
    return isinstance(general, Decimal) and str(flat) == str(general)


def test_the_recordings_give_usage_shapes_to_check() -> None:
    # Our own cassettes give three; the shared corpus, when present, more.
    assert len(RECORDED) >= 3
    assert any("cache_creation" in usage for usage in RECORDED)


@pytest.mark.parametrize("model", MODELS)
def test_every_model_and_usage_shape_prices_exactly_as_genai_prices(model: str) -> None:
    mismatches = [
        (usage, flat, general)
        for usage in [*RECORDED, *SHAPES]
        if not _same(flat := _flat(usage, model), general := _general(usage, model))
    ]
    assert mismatches == []


def test_flat_models_take_the_flat_path_for_recorded_usage() -> None:
    # Otherwise the comparison above would pass by always declining.
    taken = [
        (model, usage)
        for model in MODELS
        for usage in RECORDED
        if isinstance(_flat(usage, model), Decimal)
    ]
    assert len(taken) >= len(RECORDED) * (len(MODELS) // 2)
    assert _flat(usage_json(412, 68), ANSWERED) == Decimal("0.000752")


def test_cache_tiers_take_the_flat_path_at_their_own_rates() -> None:
    usage = usage_json(
        5,
        9,
        cache_creation_input_tokens=300,
        cache_creation={"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
        cache_read_input_tokens=12_345,
        server_tool_use={"web_search_requests": 3},
    )
    flat = _flat(usage, ANSWERED)

    assert isinstance(flat, Decimal)
    assert str(flat) == str(_general(usage, ANSWERED))


@pytest.mark.parametrize(
    "usage",
    [
        usage_json(10, 5, cache_read_input_tokens=-3),
        usage_json(7.5, 3),  # type: ignore[arg-type]
        usage_json(True, 3),  # type: ignore[arg-type]
        {"output_tokens": 3},
    ],
)
def test_usage_that_is_not_plain_counts_is_left_to_genai_prices(usage: dict[str, Any]) -> None:
    assert _flat(usage, ANSWERED) is None


def test_tiered_prices_are_left_to_genai_prices() -> None:
    provider = get_snapshot().find_provider(None, PROVIDER, None)
    tiered = [
        model.id
        for model in provider.models
        if isinstance(model.prices, ModelPrice)
        and any(isinstance(value, TieredPrices) for value in vars(model.prices).values())
    ]
    assert tiered, "genai-prices has no tiered Anthropic price left to check"
    for model in tiered:
        assert plan_for(model_prices(model, provider_id=PROVIDER)) is None


def test_prices_not_of_genai_prices_own_type_are_left_to_it() -> None:
    class Custom(ModelPrice):
        pass

    assert plan_for(Custom(input_mtok=Decimal(1), output_mtok=Decimal(1))) is None


@pytest.mark.parametrize(
    "prices",
    [
        {"input_mtok": "1", "output_mtok": "2"},
        {"input_mtok": "1", "output_mtok": "2", "cache_read_mtok": "0.1"},
        {"input_mtok": "3", "output_mtok": "15", "cache_write_mtok": "3.75"},
        {"input_mtok": "3", "output_mtok": "15", "cache_write_1h_mtok": "6"},
        {"input_mtok": "3", "cache_write_mtok": "3.75", "cache_write_5m_mtok": "3.7"},
        {"output_mtok": "2", "web_searches_kcount": "10"},
        {"cache_read_mtok": "0.1"},
    ],
)
def test_user_prices_price_exactly_as_genai_prices(prices: dict[str, str]) -> None:
    price = ModelPrice(**{key: Decimal(value) for key, value in prices.items()})
    for usage in [*RECORDED, *SHAPES]:
        flat, general = _flat(usage, "m", price), _general(usage, "m", price)
        assert _same(flat, general), (usage, flat, general)


def test_pricing_returns_the_general_answer_when_the_flat_path_declines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pricing = Pricing()

    assert (
        pricing.cost(usage_json(10, 5, cache_read_input_tokens=-3), model=ANSWERED, requested=MODEL)
        is None
    )
    assert "cannot price a call" in caplog.text
    assert pricing.cost(usage_json(), model="not-a-model", requested="not-a-model") is None


def test_the_usage_reader_reads_anthropic_usage_as_genai_prices_does() -> None:
    reader = usage_reader(PROVIDER)
    usage = usage_json(
        5,
        9,
        cache_creation_input_tokens=300,
        cache_creation={"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
        cache_read_input_tokens=12_345,
    )

    assert reader is not None
    counts = reader.counts(usage)
    extracted = genai_prices.extract_usage({"usage": usage}, provider_id=PROVIDER).usage
    assert counts == extracted._reported_values()
