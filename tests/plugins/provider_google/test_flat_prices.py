"""The flat-price path gives genai-prices' own price, to the digit, or leaves the call to it.

Every Google model genai-prices knows is priced with every `usageMetadata`
recorded in our Google cassettes, plus shapes no recording has (zero counts,
cache reads, thoughts, tool-use prompts, audio and image modality counts,
huge counts, missing fields, odd values), both ways: the general path the
provider took before (`genai_prices.calc_price`, with its errors) and the
provider's pricing now.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import genai_prices
import pytest
import yaml
from genai_prices.data_snapshot import get_snapshot
from genai_prices.types import (
    ConditionalPrice,
    ModelPrice,
    Tier,
    TieredPrices,
    TimeOfDateConstraint,
)

from neuron_provider_google._answer import parse_usage
from neuron_provider_google._pricing import (
    PRICE_PROVIDER_ID,
    _flat_cost,
    _price_data_cost,
)
from neuron_turn.loop.flat_price import model_prices, plan_for
from neuron_turn.loop.provider import TokenUsage
from tests.cassettes import CASSETTES, body_values

from ._support import MODEL, usage

REFUSED = "refused"


def _recorded_metadata() -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(CASSETTES / "google").glob("*.yaml")):
        for interaction in yaml.safe_load(path.read_text())["interactions"]:
            body = interaction["response"].get("body", {}).get("string", "")
            for value in body_values(body) if isinstance(body, str) else ():
                metadata = value.get("usageMetadata") if isinstance(value, dict) else None
                if isinstance(metadata, dict):
                    found[json.dumps(metadata, sort_keys=True)] = metadata
    return list(found.values())


RECORDED = _recorded_metadata()
METADATA_SHAPES: list[object] = [
    usage(),
    usage(0, 0),
    usage(2000, 500, thoughts=128, cached=1024),
    usage(1000, 10, cached=0),
    usage(300_000, 20, thoughts=5, cached=250_000),  # past Gemini 2.5 Pro's 200k tier
    {"promptTokenCount": 300, "candidatesTokenCount": 20, "toolUsePromptTokenCount": 40},
    {
        "promptTokenCount": 500,
        "candidatesTokenCount": 50,
        "cachedContentTokenCount": 50,
        "promptTokensDetails": [
            {"modality": "AUDIO", "tokenCount": 400},
            {"modality": "TEXT", "tokenCount": 100},
        ],
        "cacheTokensDetails": [{"modality": "AUDIO", "tokenCount": 50}],
        "candidatesTokensDetails": [{"modality": "IMAGE", "tokenCount": 50}],
        "toolUsePromptTokensDetails": [{"modality": "VIDEO", "tokenCount": 7}],
    },
    {"candidatesTokenCount": 3},
    {"promptTokenCount": 3},
    {"thoughtsTokenCount": 9},
    {},
    None,
    {
        "promptTokenCount": 10**30,
        "candidatesTokenCount": 10**29 + 7,
        "thoughtsTokenCount": 10**28,
        "cachedContentTokenCount": 10**29,
    },
    {"promptTokenCount": 10, "cachedContentTokenCount": 20},  # genai-prices refuses
    {"promptTokenCount": "12", "candidatesTokenCount": True, "cachedContentTokenCount": -1},
    {"promptTokenCount": 12.5, "candidatesTokenCount": None, "cachedContentTokenCount": "3"},
]
TOKEN_SHAPES: list[TokenUsage] = [
    TokenUsage(),
    TokenUsage(0, 0, 0),
    TokenUsage(5, 3, None),
    TokenUsage(5, 3, 5),
    TokenUsage(10, 5, cache_creation_tokens=4),  # Google reports none; ignored as before
    TokenUsage(10, 5, -3),
    TokenUsage(-1, 2),
    TokenUsage(True, 3),
    TokenUsage(7.5, 3),  # type: ignore[arg-type]
    TokenUsage(7, 3, Decimal(2)),  # type: ignore[arg-type]
    TokenUsage(10**40, 10**40, 10**39),
]
USAGES = [*(parse_usage(metadata) for metadata in [*RECORDED, *METADATA_SHAPES]), *TOKEN_SHAPES]


def _models() -> list[str]:
    provider = get_snapshot().find_provider(None, PRICE_PROVIDER_ID, None)
    return sorted({model.id for model in provider.models} | {MODEL, "not-a-model"})


MODELS = _models()


def _before(tokens: TokenUsage, model: str) -> object:
    """What the provider's pricing gave before the flat path: `calc_price` alone."""
    try:
        counts = genai_prices.Usage(
            input_tokens=tokens.input_tokens,
            output_tokens=tokens.output_tokens,
            cache_read_tokens=tokens.cache_read_tokens,
        )
    except ValueError:
        return REFUSED  # raised out of the pricing, as before
    try:
        return genai_prices.calc_price(counts, model, provider_id=PRICE_PROVIDER_ID).total_price
    except (LookupError, ValueError):
        return None


def _after(tokens: TokenUsage, model: str) -> object:
    try:
        return _price_data_cost(tokens, model)
    except ValueError:
        return REFUSED


def _digits(value: object) -> str:
    # Decimal("1.0") == Decimal("1"): compare the digits genai-prices gives, not the value.
    return repr(value)


def test_the_recordings_give_usage_shapes_to_check() -> None:
    assert len(RECORDED) >= 3
    assert any("thoughtsTokenCount" in metadata for metadata in RECORDED)


@pytest.mark.parametrize("model", MODELS)
def test_every_model_and_usage_shape_prices_exactly_as_before(model: str) -> None:
    mismatches = [
        (tokens, after, before)
        for tokens in USAGES
        if _digits(after := _after(tokens, model)) != _digits(before := _before(tokens, model))
    ]
    assert mismatches == []


@pytest.mark.parametrize("model", MODELS)
def test_the_flat_path_gives_genai_prices_digits_or_declines(model: str) -> None:
    mismatches = []
    for tokens in USAGES:
        try:
            flat = _flat_cost(tokens, model)
        except LookupError:
            flat = None
        if flat is not None and _digits(flat) != _digits(_before(tokens, model)):
            mismatches.append((tokens, flat, _before(tokens, model)))
    assert mismatches == []


def test_flat_models_take_the_flat_path_for_recorded_usage() -> None:
    # Otherwise the comparisons above would pass by always declining.
    recorded = [parse_usage(metadata) for metadata in RECORDED]
    taken = [
        (model, tokens)
        for model in MODELS
        for tokens in recorded
        if model != "not-a-model" and isinstance(_flat_cost(tokens, model), Decimal)
    ]
    assert len(taken) >= len(recorded) * (len(MODELS) // 2)
    # Gemini 2.5 Flash lists audio prices, which the plan prices as 0 audio tokens.
    assert _flat_cost(TokenUsage(2000, 628, 1024), MODEL) == Decimal("0.00189352")


def _tiered_models() -> list[str]:
    provider = get_snapshot().find_provider(None, PRICE_PROVIDER_ID, None)
    now = datetime.now(tz=UTC)
    return [
        model.id
        for model in provider.models
        if any(isinstance(value, TieredPrices) for value in vars(model.get_prices(now)).values())
    ]


def test_tiered_prices_are_left_to_calc_price() -> None:
    tiered = _tiered_models()
    assert "gemini-2.5-pro" in tiered
    above_the_tier = TokenUsage(300_000, 20, 250_000)
    for model in tiered:
        assert plan_for(model_prices(model, provider_id=PRICE_PROVIDER_ID)) is None
        assert _flat_cost(above_the_tier, model) is None
        assert _digits(_after(above_the_tier, model)) == _digits(_before(above_the_tier, model))


def _around_now(start_hours: int, end_hours: int) -> TimeOfDateConstraint:
    now = datetime.now(tz=UTC)
    return TimeOfDateConstraint(
        (now + timedelta(hours=start_hours)).timetz(), (now + timedelta(hours=end_hours)).timetz()
    )


@pytest.mark.parametrize(
    ("constraint", "active"),
    [(_around_now(-1, 1), True), (_around_now(1, 2), False)],
    ids=["off-peak-now", "off-peak-later"],
)
def test_a_time_of_day_price_is_the_one_calc_price_picks_now(
    monkeypatch: pytest.MonkeyPatch, constraint: TimeOfDateConstraint, active: bool
) -> None:
    _, info = get_snapshot().find_provider_model(MODEL, None, PRICE_PROVIDER_ID, None)
    standard = ModelPrice(input_mtok=Decimal("0.3"), output_mtok=Decimal("2.5"))
    off_peak = ModelPrice(
        input_mtok=Decimal("0.15"),
        output_mtok=Decimal("1.25"),
        input_audio_mtok=Decimal("0.5"),
        cache_read_mtok=Decimal("0.015"),
        cache_audio_read_mtok=Decimal("0.05"),
    )
    monkeypatch.setattr(
        info,
        "prices",
        [ConditionalPrice(prices=standard), ConditionalPrice(constraint, prices=off_peak)],
    )
    tokens = TokenUsage(2000, 628, 1024)

    flat = _flat_cost(tokens, MODEL)

    assert isinstance(flat, Decimal)
    assert _digits(flat) == _digits(_before(tokens, MODEL))
    assert flat == (Decimal("0.00094676") if active else Decimal("0.00217"))


def test_a_tiered_price_in_a_conditional_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _, info = get_snapshot().find_provider_model(MODEL, None, PRICE_PROVIDER_ID, None)
    tiered = ModelPrice(
        input_mtok=TieredPrices(Decimal("1"), [Tier(100, Decimal("2"))]),
        output_mtok=Decimal("3"),
    )
    monkeypatch.setattr(info, "prices", [ConditionalPrice(_around_now(-1, 1), prices=tiered)])
    tokens = TokenUsage(1000, 10)

    assert _flat_cost(tokens, MODEL) is None
    assert _digits(_after(tokens, MODEL)) == _digits(_before(tokens, MODEL))
    assert _after(tokens, MODEL) == Decimal("0.00203")
