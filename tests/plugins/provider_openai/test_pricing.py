"""Cost: the user's prices, genai-prices' data, and the flat-price shortcut matching it."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from genai_prices import Usage, calc_price
from genai_prices.data_snapshot import get_snapshot
from moneyed import Money

from neuron_provider_openai._pricing import ModelPrice, Pricer, flat_price, parse_prices
from neuron_turn.loop.provider import TokenUsage

USAGES = [
    TokenUsage(1000, 100, 0),
    TokenUsage(1000, 100, 400),
    TokenUsage(300_000, 5_000, 1_000, 2_000),
    TokenUsage(5, 0, None),
]


def genai_cost(usage: TokenUsage, model: str) -> Decimal:
    tokens = Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_creation_tokens,
    )
    return calc_price(tokens, model, provider_id="openai").total_price


def openai_chat_models() -> list[str]:
    (openai,) = [p for p in get_snapshot().providers if p.id == "openai"]
    return [
        m.id
        for m in openai.models
        if not m.id.startswith(("ft:", "text-embedding", "tts", "whisper"))
    ]


def test_model_price_bills_cache_reads_and_writes_inside_input_tokens() -> None:
    price = ModelPrice(Decimal(1), Decimal(2), Decimal("0.5"), Decimal(3))
    usage = TokenUsage(
        input_tokens=1000, output_tokens=10, cache_read_tokens=200, cache_creation_tokens=100
    )
    # 700 uncached * 1 + 200 read * 0.5 + 100 written * 3 + 10 out * 2, per million.
    assert price.cost(usage) == Decimal("0.00112")


def test_missing_cache_prices_bill_cached_tokens_as_input() -> None:
    price = ModelPrice(Decimal(1), Decimal(2))
    usage = TokenUsage(1000, 10, 200, 100)
    assert price.cost(usage) == Decimal("0.00102")


def test_flat_prices_give_exactly_what_genai_prices_gives() -> None:
    checked = 0
    for model in openai_chat_models():
        try:
            flat = flat_price(model, "openai", None, date.today())
        except LookupError:
            continue  # an id genai-prices itself does not resolve to this model
        if flat is None:
            continue
        checked += 1
        for usage in USAGES:
            assert flat.cost(usage) == genai_cost(usage, model), (model, usage)
    assert checked > 20


def test_tiered_prices_fall_back_to_genai_prices() -> None:
    tiered = [m for m in openai_chat_models() if m.startswith("gpt-5.4")]
    assert tiered, "genai-prices no longer has a tiered gpt-5.4 price; pick another tiered model"
    model = tiered[0]
    assert flat_price(model, "openai", None, date.today()) is None
    pricer = Pricer(overrides={}, lookup=True, provider_id="openai")
    usage = TokenUsage(300_000, 5_000, 1_000)
    assert pricer.cost(usage, model=model, requested_model=model) == Money(
        genai_cost(usage, model), "USD"
    )


def test_unknown_model_has_no_price() -> None:
    pricer = Pricer(overrides={}, lookup=True, provider_id="openai")
    assert pricer.cost(TokenUsage(1, 1), model="no-such-model-xyz", requested_model="x") is None


def test_overrides_win_over_price_data() -> None:
    pricer = Pricer(
        overrides=parse_prices(
            {"gpt-4o-mini-2024-07-18": {"input_mtok": "10", "output_mtok": "0"}}
        ),
        lookup=True,
        provider_id="openai",
    )
    cost = pricer.cost(TokenUsage(100_000, 0), model="gpt-4o-mini-2024-07-18", requested_model="x")
    assert cost == Money(Decimal(1), "USD")


def test_prices_accept_decimal_strings_decimals_and_ints() -> None:
    parsed = parse_prices(
        {"m": {"input_mtok": "0.5", "output_mtok": Decimal("1.5"), "cache_write_mtok": 2}}
    )
    assert parsed["m"] == ModelPrice(Decimal("0.5"), Decimal("1.5"), None, Decimal(2))


@pytest.mark.parametrize("value", [0.5, True, None, "NaN", "Infinity"])
def test_prices_reject_floats_and_non_amounts(value: object) -> None:
    with pytest.raises(ValueError):
        parse_prices({"m": {"input_mtok": value, "output_mtok": "1"}})  # type: ignore[dict-item]


def _genai_or_none(usage: TokenUsage, model: str, provider_id: str) -> Money | None:
    tokens = Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_creation_tokens,
    )
    try:
        return Money(calc_price(tokens, model, provider_id=provider_id).total_price, "USD")
    except (LookupError, ValueError):
        return None


def test_every_provider_and_model_costs_what_genai_prices_says() -> None:
    # OpenAI-compatible servers reach genai-prices' other providers by their URL: per-request
    # fees (Perplexity), off-peak hours (DeepSeek) and reads above the input must match too.
    usages = [*USAGES, TokenUsage(5, 3, 9), TokenUsage(10, 1, 6, 6)]
    mismatches = []
    for provider in get_snapshot().providers:
        pricer = Pricer(overrides={}, lookup=True, provider_id=provider.id)
        for model in provider.models:
            for usage in usages:
                ours = pricer.cost(usage, model=model.id, requested_model=model.id)
                expected = _genai_or_none(usage, model.id, provider.id)
                if ours != expected:
                    mismatches.append((provider.id, model.id, usage, ours, expected))
    assert mismatches == []


def test_a_per_request_fee_is_not_a_flat_token_price() -> None:
    assert flat_price("sonar", "perplexity", None, date.today()) is None


def test_off_peak_prices_are_not_cached_for_the_day() -> None:
    assert flat_price("deepseek-chat", "deepseek", None, date.today()) is None


def test_cache_reads_beyond_the_input_are_left_to_genai_prices() -> None:
    pricer = Pricer(overrides={}, lookup=True, provider_id="openai")
    usage = TokenUsage(input_tokens=5, output_tokens=3, cache_read_tokens=9)

    assert pricer.cost(usage, model="gpt-4o-mini", requested_model="gpt-4o-mini") is None


def test_a_price_for_units_we_never_count_keeps_the_token_prices_flat() -> None:
    # gpt-4o-mini also prices web and file searches, which chat usage never reports.
    flat = flat_price("gpt-4o-mini", "openai", None, date.today())

    assert flat is not None
    usage = TokenUsage(1000, 100, 400)
    assert flat.cost(usage) == genai_cost(usage, "gpt-4o-mini")
