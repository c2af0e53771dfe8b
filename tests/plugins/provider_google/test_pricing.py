"""The Google provider's cost: genai-prices' data for Google, or the caller's prices."""

from __future__ import annotations

from decimal import Decimal

import genai_prices
import pytest
from moneyed import Money

from neuron_provider_google._pricing import parse_prices
from neuron_turn.loop.provider import ProviderResponse, TextPart, TokenUsage

from ._support import json_response, mocked, request, response, sse, text, usage

BODY = response(text("Hi"), usageMetadata=usage(2000, 500, thoughts=128, cached=1024))


def genai_prices_cost(body: dict[str, object]) -> Money:
    """What genai-prices itself makes of `body`'s usage, for gemini-2.5-flash."""
    extracted = genai_prices.extract_usage(body, provider_id="google")
    price = genai_prices.calc_price(extracted.usage, "gemini-2.5-flash", provider_id="google")
    return Money(price.total_price, "USD")


async def test_usage_is_what_genai_prices_reads_from_a_gemini_body() -> None:
    provider, _ = mocked(json_response(BODY))
    answer = await provider.complete(request())
    extracted = genai_prices.extract_usage(BODY, provider_id="google")
    assert answer.usage == TokenUsage(
        extracted.usage.input_tokens or 0,
        extracted.usage.output_tokens or 0,
        extracted.usage.cache_read_tokens,
    )


async def test_cost_is_genai_prices_price_for_the_answered_model() -> None:
    provider, _ = mocked(json_response(BODY))
    answer = await provider.complete(request())
    assert answer.cost == genai_prices_cost(BODY)
    assert answer.cost is not None and answer.cost.amount > 0


async def test_prices_option_wins_for_the_answered_or_the_asked_model() -> None:
    prices = {"gemini-2.5-flash": {"input_mtok": "1", "output_mtok": "2", "cache_read_mtok": "0.5"}}
    provider, _ = mocked(json_response(BODY), prices=prices)
    answer = await provider.complete(request())
    # (2000 - 1024) * 1 + 1024 * 0.5 + (500 + 128) * 2 per million tokens.
    assert answer.cost == Money(Decimal("0.002744"), "USD")
    other = response(text("Hi"), usageMetadata=usage(1000, 0), modelVersion="gemini-x-001")
    provider, _ = mocked(
        json_response(other), prices={"gemini-2.5-flash": prices["gemini-2.5-flash"]}
    )
    assert (await provider.complete(request())).cost == Money(Decimal("0.001"), "USD")


async def test_an_unknown_model_has_no_cost() -> None:
    provider, _ = mocked(json_response(response(modelVersion="not-a-gemini-model-xyz")))
    assert (await provider.complete(request())).cost is None


async def test_lookup_prices_off_leaves_unpriced_models_unknown() -> None:
    provider, _ = mocked(json_response(BODY), lookup_prices=False)
    assert (await provider.complete(request())).cost is None


def test_context_window_comes_from_genai_prices_and_unknown_is_none() -> None:
    provider, _ = mocked()
    window = provider.context_window("gemini-2.5-flash")
    assert isinstance(window, int) and window >= 1_000_000
    assert provider.context_window("models/gemini-2.5-flash") == window
    assert provider.context_window("not-a-gemini-model-xyz") is None


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        ({"input_mtok": 0.3, "output_mtok": "2"}, "floats would lose cents"),
        ({"input_mtok": "1"}, "missing"),
        ({"input_mtok": "1", "output_mtok": "2", "audio_mtok": "3"}, "unknown key"),
        ({"input_mtok": "-1", "output_mtok": "2"}, "non-negative"),
    ],
)
def test_bad_prices_are_refused_saying_why(entry: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_prices({"gemini-2.5-flash": entry})  # type: ignore[dict-item]


def _with_details(key: str, *details: tuple[str, int], **counts: int) -> dict[str, object]:
    metadata = usage(**counts)  # type: ignore[arg-type]
    metadata[key] = [{"modality": modality, "tokenCount": n} for modality, n in details]
    return metadata


async def test_audio_in_the_prompt_is_priced_at_the_models_audio_price() -> None:
    metadata = _with_details(
        "promptTokensDetails", ("TEXT", 200), ("AUDIO", 800), prompt=1000, candidates=100
    )
    body = response(text("Heard."), usageMetadata=metadata)
    provider, _ = mocked(json_response(body))
    answer = await provider.complete(request())
    assert answer.cost == genai_prices_cost(body)
    # 200 text tokens at $0.30 and 800 audio tokens at $1 per million, 100 out at $2.50.
    assert answer.cost == Money(Decimal("0.00111"), "USD")
    assert answer.usage == TokenUsage(1000, 100, None)


async def test_streamed_audio_is_priced_from_the_last_chunks_metadata() -> None:
    metadata = _with_details("promptTokensDetails", ("AUDIO", 1000), prompt=1000, candidates=10)
    provider, _ = mocked(sse(response(text("Heard."), usageMetadata=metadata)))
    *_, final = [event async for event in provider.stream(request())]
    # 1000 audio tokens at $1 and 10 out at $2.50 per million.
    assert isinstance(final, ProviderResponse)
    assert final.cost == Money(Decimal("0.001025"), "USD")


@pytest.mark.parametrize(
    "metadata",
    [
        usage(1000, 100),
        _with_details("promptTokensDetails", ("AUDIO", 0), ("TEXT", 1000), prompt=1000),
        _with_details("promptTokensDetails", ("IMAGE", 600), ("TEXT", 400), prompt=1000),
    ],
)
async def test_a_call_without_priced_media_costs_what_genai_prices_says(
    metadata: dict[str, object],
) -> None:
    body = response(text("Seen."), usageMetadata=metadata)
    provider, _ = mocked(json_response(body))
    answer = await provider.complete(request())
    assert answer.cost == genai_prices_cost(body)


async def test_prices_option_bills_audio_at_its_one_input_price() -> None:
    metadata = _with_details("promptTokensDetails", ("AUDIO", 1000), prompt=1000, candidates=0)
    prices = {"gemini-2.5-flash": {"input_mtok": "1", "output_mtok": "2"}}
    provider, _ = mocked(json_response(response(usageMetadata=metadata)), prices=prices)
    assert (await provider.complete(request())).cost == Money(Decimal("0.001"), "USD")


@pytest.mark.parametrize(
    "metadata",
    [
        _with_details("promptTokensDetails", ("AUDIO", 5), prompt=10) | {"promptTokenCount": "x"},
        {"promptTokenCount": 10, "promptTokensDetails": [{"modality": {"a": 1}, "tokenCount": 5}]},
        {"promptTokenCount": 10, "promptTokensDetails": [{"modality": "AUDIO", "tokenCount": "5"}]},
        {"promptTokenCount": 10, "promptTokensDetails": {"modality": "AUDIO", "tokenCount": 5}},
        {"promptTokenCount": 10, "promptTokensDetails": [7, None, {"modality": "AUDIO"}]},
        {"promptTokenCount": 10, "cacheTokensDetails": [{"modality": "AUDIO", "tokenCount": 50}]},
        {"promptTokenCount": 10, "promptTokensDetails": [{"modality": "AUDIO", "tokenCount": -5}]},
    ],
)
async def test_hostile_usage_details_never_fail_the_call(metadata: dict[str, object]) -> None:
    provider, _ = mocked(json_response(response(text("Hi"), usageMetadata=metadata)))
    answer = await provider.complete(request())
    assert answer.content == [TextPart("Hi")]
    assert answer.cost is None or answer.cost.amount >= 0
