"""Google Search grounding's fee in a Gemini call's cost, as Google bills it.

Gemini 2.x and older: one unit per grounded prompt; Gemini 3: one per distinct
non-empty search query (https://ai.google.dev/gemini-api/docs/google-search#pricing),
priced at genai-prices' `web_searches_kcount` for the model.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import genai_prices
import pytest
from moneyed import Money

from layer0 import TurnInput
from neuron_provider_google._answer import billed_searches, parse_response
from neuron_provider_google._pricing import parse_prices
from neuron_provider_google._stream import ChunkReader
from neuron_tool import tool
from neuron_turn import HostedToolCall, NeuronTurn, NeuronTurnConfig, WebSearch
from neuron_turn.loop.provider import ProviderResponse, TextPart
from tests.unpriced_searches import unpriced_searches, warnings_of

from ._support import call, json_response, mocked, request, response, sse, text, usage

GEMINI_2 = "gemini-2.5-flash"
GEMINI_3 = "gemini-3.1-flash-lite"
QUERIES = ["euro 2024 winner", "spain england final score", "euro 2024 top scorer"]


def grounded(body: dict[str, Any], grounding: object) -> dict[str, Any]:
    body["candidates"][0]["groundingMetadata"] = grounding
    return body


def answer(model: str, grounding: object = None, **metadata: Any) -> dict[str, Any]:
    """A 1000-in, 100-out answer by `model`, with `grounding` as its `groundingMetadata`."""
    body = response(
        text("Spain won."),
        usageMetadata=metadata or usage(1000, 100),
        modelVersion=model,
    )
    return body if grounding is None else grounded(body, grounding)


def search(*queries: object) -> dict[str, Any]:
    """A `groundingMetadata` as a search gives it: the queries run and the sources read."""
    return {
        "webSearchQueries": list(queries),
        "groundingChunks": [{"web": {"uri": "https://www.uefa.com/", "title": "uefa.com"}}],
        "searchEntryPoint": {"renderedContent": "<div></div>"},
    }


def price(model: str, web_searches: int = 0, **tokens: int) -> Money:
    """genai-prices' own price for a 1000-in, 100-out call making `web_searches`."""
    counts: dict[str, int] = {"input_tokens": 1000, "output_tokens": 100, **tokens}
    if web_searches:
        counts["web_searches"] = web_searches
    amount = genai_prices.calc_price(
        genai_prices.Usage(**counts), model, provider_id="google"
    ).total_price
    return Money(amount, "USD")


async def cost_of(body: dict[str, Any], **options: Any) -> Money | None:
    provider, _ = mocked(json_response(body), **options)
    return (await provider.complete(request(hosted_tools=[WebSearch()]))).cost


async def streamed(*chunks: dict[str, Any], **options: Any) -> ProviderResponse:
    provider, _ = mocked(sse(*chunks), **options)
    *_, final = [event async for event in provider.stream(request(hosted_tools=[WebSearch()]))]
    assert isinstance(final, ProviderResponse)
    return final


# --- complete ---------------------------------------------------------------------------


async def test_a_gemini_2_5_grounded_answer_costs_genai_prices_price_with_one_web_search() -> None:
    cost = await cost_of(answer(GEMINI_2, search(*QUERIES)))
    # Three queries, one grounded prompt: $35 per 1,000 on top of the tokens.
    assert cost == price(GEMINI_2, web_searches=1)
    assert cost == price(GEMINI_2) + Money(Decimal("0.035"), "USD")
    assert cost > price(GEMINI_2)


async def test_a_gemini_2_0_answer_is_also_billed_per_grounded_prompt() -> None:
    assert await cost_of(answer("gemini-2.0-flash", search(*QUERIES))) == price(
        "gemini-2.0-flash", web_searches=1
    )


async def test_a_gemini_3_answer_with_three_queries_costs_three_web_searches() -> None:
    cost = await cost_of(answer(GEMINI_3, search(*QUERIES)))
    assert cost == price(GEMINI_3, web_searches=3)
    # $14 per 1,000 queries, three of them.
    assert cost == price(GEMINI_3) + Money(Decimal("0.042"), "USD")


async def test_gemini_3_does_not_bill_empty_or_repeated_queries() -> None:
    grounding = search("", QUERIES[0], "", QUERIES[1], QUERIES[0])
    assert await cost_of(answer(GEMINI_3, grounding)) == price(GEMINI_3, web_searches=2)


async def test_a_model_whose_name_gives_no_generation_is_billed_per_query() -> None:
    body = answer("gemini-flash-latest", search(*QUERIES))
    assert parse_response(body, fallback_model="", fallback_salt="s").web_searches == 3


def test_the_answered_model_decides_the_generation_then_the_one_asked_for() -> None:
    grounding = search(*QUERIES)
    assert billed_searches(grounding, "gemini-3-pro-preview", GEMINI_2) == 3
    assert billed_searches(grounding, "models/gemini-2.5-pro", "gemini-3-pro") == 1
    assert billed_searches(grounding, "tunedModels/my-model", "gemini-2.0-flash") == 1
    assert billed_searches(grounding, "gemini-" + "9" * 5000) == 3  # no int() of 5000 digits


# --- no grounding: priced as before -----------------------------------------------------


@pytest.mark.parametrize(
    "grounding",
    [
        None,
        {"groundingChunks": [{"web": {"uri": "https://example.com/a"}}]},  # urlContext alone
        {"webSearchQueries": []},
        {"webSearchQueries": ["", ""]},
    ],
)
async def test_an_answer_without_search_queries_is_priced_exactly_as_before(
    grounding: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = answer(GEMINI_2, grounding)
    assert parse_response(body, fallback_model="", fallback_salt="s").web_searches == 0

    def no_calc_price(*args: object, **kwargs: object) -> object:
        raise AssertionError("a call without grounding left the flat-price path")

    expected = price(GEMINI_2)
    monkeypatch.setattr(genai_prices, "calc_price", no_calc_price)
    assert await cost_of(body) == expected


# --- streamed ---------------------------------------------------------------------------


async def test_a_streamed_gemini_2_5_answer_costs_one_web_search() -> None:
    first = response(text("Spain "), finish=None, modelVersion=GEMINI_2)
    last = answer(GEMINI_2, search(*QUERIES))
    final = await streamed(first, last)
    assert final.cost == price(GEMINI_2, web_searches=1)


async def test_a_streamed_gemini_3_answer_costs_each_of_its_queries() -> None:
    first = response(text("Spain "), finish=None, modelVersion=GEMINI_3)
    last = answer(GEMINI_3, search(*QUERIES))
    assert (await streamed(first, last)).cost == price(GEMINI_3, web_searches=3)


async def test_queries_sent_before_the_sources_still_count_in_a_stream() -> None:
    early = grounded(
        response(text("Spain "), finish=None, modelVersion=GEMINI_3),
        {"webSearchQueries": QUERIES[:2]},
    )
    middle = grounded(
        response(text("won "), finish=None, modelVersion=GEMINI_3),
        {"webSearchQueries": QUERIES[1:]},
    )
    late = answer(GEMINI_3, {"groundingChunks": search()["groundingChunks"]})
    final = await streamed(early, middle, late)
    assert final.cost == price(GEMINI_3, web_searches=3)
    assert final.hosted_calls == tuple(HostedToolCall("web_search", {"query": q}) for q in QUERIES)
    assert final.content == [TextPart("Spain won Spain won.")]


def test_a_stream_repeating_its_queries_on_each_chunk_counts_them_once() -> None:
    reader = ChunkReader(fallback_salt="s")
    for _ in range(3):
        reader.feed_chunk(answer(GEMINI_3, search(QUERIES[0], QUERIES[0], QUERIES[1], 7)))
    body = reader.body()
    candidates: Any = body["candidates"]
    # The last chunk lists them all: its metadata is kept as sent.
    assert candidates[0]["groundingMetadata"] == search(QUERIES[0], QUERIES[0], QUERIES[1], 7)
    assert parse_response(body, fallback_model="", fallback_salt="s").web_searches == 2


# --- malformed grounding ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("grounding", "billed"),
    [
        ("not an object", 0),
        ([QUERIES[0]], 0),
        (7, 0),
        ({"webSearchQueries": QUERIES[0]}, 0),
        ({"webSearchQueries": {"0": QUERIES[0]}}, 0),
        ({"webSearchQueries": [1, None, True, {"q": "x"}, [QUERIES[0]]]}, 0),
        ({"webSearchQueries": [3, QUERIES[0], None, "", QUERIES[1], {"a": [1]}]}, 2),
    ],
)
async def test_malformed_grounding_never_fails_the_call_and_counts_only_well_formed_queries(
    grounding: object, billed: int
) -> None:
    body = answer(GEMINI_3, grounding)
    provider, _ = mocked(json_response(body))
    result = await provider.complete(request(hosted_tools=[WebSearch()]))
    assert result.content == [TextPart("Spain won.")]
    assert result.cost == price(GEMINI_3, web_searches=billed)

    first = grounded(response(text("Spain "), finish=None, modelVersion=GEMINI_3), grounding)
    final = await streamed(first, answer(GEMINI_3, grounding))
    assert final.cost == price(GEMINI_3, web_searches=billed)


async def test_a_malformed_last_chunk_keeps_the_queries_of_earlier_ones() -> None:
    early = grounded(
        response(text("Spain "), finish=None, modelVersion=GEMINI_3), search(*QUERIES[:2])
    )
    final = await streamed(early, answer(GEMINI_3, "garbage"))
    assert final.cost == price(GEMINI_3, web_searches=2)


# --- with audio, and the user's prices --------------------------------------------------


async def test_audio_tokens_and_grounding_are_both_priced() -> None:
    metadata = usage(1000, 100)
    metadata["promptTokensDetails"] = [
        {"modality": "TEXT", "tokenCount": 200},
        {"modality": "AUDIO", "tokenCount": 800},
    ]
    body = answer(GEMINI_2, search(*QUERIES), **metadata)
    cost = await cost_of(body)
    extracted = genai_prices.extract_usage(body, provider_id="google").usage
    extracted.web_searches = 1
    expected = genai_prices.calc_price(extracted, GEMINI_2, provider_id="google").total_price
    assert cost == Money(expected, "USD")
    # 200 text tokens at $0.30 and 800 audio tokens at $1 per million, 100 out at $2.50,
    # and one grounded prompt at $35 per 1,000.
    assert cost == Money(Decimal("0.03611"), "USD")


async def test_a_prices_entry_bills_grounding_at_its_own_web_searches_kcount() -> None:
    prices = {GEMINI_3: {"input_mtok": "1", "output_mtok": "2", "web_searches_kcount": "10"}}
    # 1000 in at $1, 100 out at $2 per million, three queries at $10 per 1,000.
    expected = Money(Decimal("0.0012") + Decimal("0.03"), "USD")
    assert await cost_of(answer(GEMINI_3, search(*QUERIES)), prices=prices) == expected


TOKENS = {"input_mtok": "1", "output_mtok": "2"}
"""A `prices=` entry's token prices: 1000 in at $1, 100 out at $2 per million, $0.0012."""
OWN_MODEL = "gemini-acme-tuned"
"""A model genai-prices does not know (its name gives no generation: billed per query)."""


async def answered(body: dict[str, Any], model: str, **options: Any) -> ProviderResponse:
    """The response to a grounded call asking for `model`, answered with `body`."""
    provider, _ = mocked(json_response(body), **options)
    return await provider.complete(request(model=model, hosted_tools=[WebSearch()]))


async def test_a_prices_entry_without_web_searches_kcount_takes_genai_prices_fee() -> None:
    reply = await answered(answer(GEMINI_3, search(*QUERIES)), GEMINI_3, prices={GEMINI_3: TOKENS})

    # The entry's tokens, then three queries at genai-prices' $14 per 1,000 for Gemini 3.
    assert reply.cost == Money(Decimal("0.0432"), "USD")
    assert reply.unpriced_web_searches == 0


async def test_grounding_of_a_model_no_price_covers_keeps_the_token_cost_and_is_reported() -> None:
    body = answer(OWN_MODEL, search(*QUERIES))

    reply = await answered(body, OWN_MODEL, prices={OWN_MODEL: TOKENS})
    with_fee = {OWN_MODEL: {**TOKENS, "web_searches_kcount": "10"}}
    priced = await answered(body, OWN_MODEL, prices=with_fee)

    assert reply.cost == Money(Decimal("0.0012"), "USD")
    assert reply.unpriced_web_searches == 3
    assert priced.cost == Money(Decimal("0.0312"), "USD")  # the entry's own fee: 3 * 10 / 1,000
    assert priced.unpriced_web_searches == 0


async def test_a_streamed_answer_reports_the_grounding_no_price_covers() -> None:
    first = response(text("Spain "), finish=None, modelVersion=OWN_MODEL)
    provider, _ = mocked(
        sse(first, answer(OWN_MODEL, search(*QUERIES))), prices={OWN_MODEL: TOKENS}
    )
    asked = request(model=OWN_MODEL, hosted_tools=[WebSearch()])

    *_, final = [event async for event in provider.stream(asked)]

    assert isinstance(final, ProviderResponse)
    assert final.cost == Money(Decimal("0.0012"), "USD")
    assert final.unpriced_web_searches == 3


async def test_grounding_genai_prices_has_no_fee_for_is_reported_not_priced_at_zero() -> None:
    old = "gemini-1.5-flash"  # genai-prices lists its tokens, not a grounding fee

    reply = await answered(answer(old, search(*QUERIES)), old)

    # 1000 in at $0.075, 100 out at $0.30 per million; one grounded prompt unpriced.
    assert reply.cost == Money(Decimal("0.000105"), "USD")
    assert reply.unpriced_web_searches == 1


async def test_with_lookup_off_a_prices_entry_takes_no_fee_from_genai_prices() -> None:
    body = answer(GEMINI_3, search(*QUERIES))

    reply = await answered(body, GEMINI_3, prices={GEMINI_3: TOKENS}, lookup_prices=False)

    assert reply.cost == Money(Decimal("0.0012"), "USD")
    assert reply.unpriced_web_searches == 3


@tool
def look_up(term: str) -> str:
    """Look a term up in the almanac."""
    return f"{term}: Spain"


async def test_a_turn_warns_of_grounding_no_price_covers_at_once_and_in_all() -> None:
    asking = response(
        call("look_up", {"term": "euro 2024"}),
        usageMetadata=usage(1000, 100),
        modelVersion=OWN_MODEL,
    )
    bodies = [grounded(asking, search(*QUERIES)), answer(OWN_MODEL, search("one more"))]
    provider, recorder = mocked(
        *(json_response(body) for body in bodies), prices={OWN_MODEL: TOKENS}
    )
    config = NeuronTurnConfig(model=OWN_MODEL, hosted_tools=(WebSearch(),))
    turn = NeuronTurn(provider, tools=[look_up], config=config)

    output = await turn.execute(TurnInput(message="Who won Euro 2024?", trigger="user"))

    assert len(recorder.requests) == 2
    assert output.metadata.cost == Money(Decimal("0.0024"), "USD")  # the tokens of two calls
    assert warnings_of(output) == unpriced_searches(OWN_MODEL, 3, 4)


def test_a_web_searches_kcount_price_is_checked_like_the_others() -> None:
    parsed = parse_prices(
        {GEMINI_2: {"input_mtok": "1", "output_mtok": "2", "web_searches_kcount": 35}}
    )
    assert parsed[GEMINI_2].web_searches_kcount == Decimal(35)
    with pytest.raises(ValueError, match="floats would lose cents"):
        parse_prices(
            {GEMINI_2: {"input_mtok": "1", "output_mtok": "2", "web_searches_kcount": 35.0}}  # type: ignore[dict-item]
        )
