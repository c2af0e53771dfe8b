"""What a Gemini call cost: the user's prices first, then genai-prices' data for Google.

Amounts are `Decimal` throughout and end as `moneyed.Money` in USD; no float
is ever involved. genai-prices is imported on first use. Its `calc_price`
applies Google's tiers (Gemini 2.5 Pro's price over 200k prompt tokens) and
cache-read prices; flat prices take genai-prices' own arithmetic without its
general machinery (`neuron_turn.loop.flat_price`), to the same digits. A
model it does not know costs None, as with the other providers, so the loop
says the price is unknown rather than guess. Google Search grounding is priced
as genai-prices' `web_searches` (its `web_searches_kcount`: $35 per 1,000
grounded prompts for Gemini 2.x, $14 per 1,000 queries for Gemini 3), from the
count `_answer.billed_searches` makes of the answer; a `prices=` entry without
`web_searches_kcount` takes genai-prices' fee for the model, and grounding no
price covers is counted (`Pricer.unpriced_searches`) so the loop warns that the
cost leaves it out, never priced at 0. Images the model makes
(`candidatesTokensDetails` of modality `IMAGE`) are priced at genai-prices'
`output_image_mtok` for the model, or a `prices=` entry's own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Final, TypeAlias

from moneyed import Money
from pydantic import JsonValue

from neuron_turn.loop.flat_price import model_prices, plan_for, search_fee
from neuron_turn.loop.price_table import price_entry
from neuron_turn.loop.provider import TokenUsage

logger = logging.getLogger("neuron_provider_google")

PriceTable: TypeAlias = Mapping[str, Mapping[str, "str | Decimal | int"]]
"""`{model: {"input_mtok": "0.3", "output_mtok": "2.5", "cache_read_mtok": "0.03"}}`,
USD per million tokens as Decimal strings (or Decimals / ints; never floats); an
optional `"web_searches_kcount": "35"` prices Google Search grounding, USD per 1,000
billed units (left out: genai-prices' fee for the model, else the grounding is left
out of the cost with a warning), and an optional `"output_image_mtok": "30"` the
images the model makes (left out: at `output_mtok`)."""

PRICE_PROVIDER_ID: Final = "google"
"""The genai-prices provider Gemini API calls are priced as."""

_PRICE_KEYS: Final = (
    "input_mtok",
    "output_mtok",
    "cache_read_mtok",
    "web_searches_kcount",
    "output_image_mtok",
)
_MTOK: Final = Decimal(1_000_000)
_KCOUNT: Final = Decimal(1_000)


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens for one model; no cache price bills cache reads as input.

    `web_searches_kcount`: USD per 1,000 grounding units; without it `cost` leaves them
    out (`Pricer` fills it from genai-prices, or reports them as unpriced).
    `output_image_mtok`: USD per million output image tokens; without it they are
    billed at `output_mtok`.
    """

    input_mtok: Decimal
    output_mtok: Decimal
    cache_read_mtok: Decimal | None = None
    web_searches_kcount: Decimal | None = None
    output_image_mtok: Decimal | None = None

    def cost(
        self, usage: TokenUsage, *, web_searches: int = 0, output_image_tokens: int = 0
    ) -> Decimal:
        """The cost of `usage` (its `input_tokens` include the cache reads) and of the searches.

        `output_image_tokens` are among `usage.output_tokens` (never counted as more).
        """
        read = min(usage.cache_read_tokens or 0, usage.input_tokens)
        read_price = self.input_mtok if self.cache_read_mtok is None else self.cache_read_mtok
        images = min(output_image_tokens, usage.output_tokens)
        image_price = self.output_mtok if self.output_image_mtok is None else self.output_image_mtok
        total = (
            (usage.input_tokens - read) * self.input_mtok
            + read * read_price
            + (usage.output_tokens - images) * self.output_mtok
            + images * image_price
        ) / _MTOK
        if web_searches and self.web_searches_kcount is not None:
            total += web_searches * self.web_searches_kcount / _KCOUNT
        return total


def parse_prices(table: PriceTable | None) -> dict[str, ModelPrice]:
    """Check and convert the `prices=` option.

    Raises:
        ValueError: an unknown key, a missing input/output price, a float or a
            value that is not a non-negative decimal.
    """
    return {model: _model_price(model, entry) for model, entry in (table or {}).items()}


def _model_price(model: str, entry: Mapping[str, str | Decimal | int]) -> ModelPrice:
    return ModelPrice(**price_entry(model, entry, keys=_PRICE_KEYS, example="0.3"))


def price_model_name(model: str) -> str:
    """The name genai-prices knows a model by: without the API's `models/` prefix."""
    return model.removeprefix("models/")


@dataclass(frozen=True, slots=True)
class Pricer:
    """Prices calls for one provider instance.

    Order: `overrides` for the answered model, then for the requested model;
    then genai-prices (when `lookup` is on) for the answered model, else None.
    """

    overrides: Mapping[str, ModelPrice]
    lookup: bool = True

    def cost(
        self,
        usage: TokenUsage,
        *,
        model: str,
        requested_model: str,
        media_usage: Mapping[str, JsonValue] | None = None,
        web_searches: int = 0,
    ) -> Money | None:
        """The call's cost in USD, or None when the model's price is unknown.

        `media_usage` (the `usageMetadata` of a call that counted audio, images or
        video) is priced by genai-prices from the metadata itself, so audio is billed
        at the model's audio price and the images the model made at its output image
        price; `prices=` entries have one input price for all, and bill the images made
        at their `output_image_mtok` (none: at `output_mtok`).
        `web_searches` (Google Search grounding units the answer is billed for, see
        `_answer.billed_searches`) are priced at a `prices=` entry's `web_searches_kcount`,
        else (when `lookup` is on) at genai-prices' for the model; units neither prices
        are left out, and `unpriced_searches` counts them. Each is counted, as one call
        cannot know whether it fell in Google's free allowance.
        """
        answered, requested = price_model_name(model), price_model_name(requested_model)
        price = self.overrides.get(answered) or self.overrides.get(requested)
        if price is not None:
            if web_searches > 0 and price.web_searches_kcount is None and self.lookup:
                price = replace(
                    price,
                    web_searches_kcount=search_fee(
                        answered, requested, provider_id=PRICE_PROVIDER_ID
                    ),
                )
            images = output_image_tokens(media_usage)
            cost = price.cost(usage, web_searches=web_searches, output_image_tokens=images)
            return Money(cost, "USD")
        if not self.lookup:
            return None
        if media_usage is not None:
            amount = _media_cost(media_usage, answered, web_searches)
        elif web_searches:  # the flat path knows tokens only
            amount = _calc_price(usage, answered, web_searches)
        else:
            amount = _price_data_cost(usage, answered)
        return None if amount is None else Money(amount, "USD")

    def unpriced_searches(self, *, model: str, requested_model: str, web_searches: int) -> int:
        """How many of a call's `web_searches` (grounding units) its `cost` leaves out.

        The loop warns of them (`ProviderResponse.unpriced_web_searches`) rather than
        let a budget count them as free.
        """
        if web_searches <= 0:
            return 0
        answered, requested = price_model_name(model), price_model_name(requested_model)
        price = self.overrides.get(answered) or self.overrides.get(requested)
        if price is not None and price.web_searches_kcount is not None:
            return 0
        if (
            self.lookup
            and search_fee(answered, requested, provider_id=PRICE_PROVIDER_ID) is not None
        ):
            return 0
        return web_searches


def output_image_tokens(media_usage: Mapping[str, JsonValue] | None) -> int:
    """The output image tokens `media_usage` counts (`candidatesTokensDetails`, `IMAGE`).

    `media_usage` is `_answer.media_usage`'s, whose details are well formed.
    """
    details = None if media_usage is None else media_usage.get("candidatesTokensDetails")
    if not isinstance(details, list):
        return 0
    return sum(
        count
        for detail in details
        if isinstance(detail, dict)
        and detail.get("modality") == "IMAGE"
        and isinstance(count := detail.get("tokenCount"), int)
    )


def _price_data_cost(usage: TokenUsage, model: str) -> Decimal | None:
    try:
        flat = _flat_cost(usage, model)
    except (LookupError, ValueError) as exc:  # what `calc_price` would raise, finding the model
        logger.debug("no price for model %r: %s", model, exc)
        return None
    return flat if flat is not None else _calc_price(usage, model)


def _flat_cost(usage: TokenUsage, model: str) -> Decimal | None:
    """genai-prices' own sum for a flat price; None: use `calc_price`.

    `calc_price` walks every unit Gemini's price lists (audio tokens, web
    searches...) on each call: about 45% of `complete`'s CPU time. The plan
    (`neuron_turn.loop.flat_price`) gives the same Decimal digits for plain
    non-negative int counts; tiers (Gemini 2.5 Pro over 200k prompt tokens),
    odd counts and usage genai-prices refuses are left to `calc_price`, which
    prices or refuses them itself.

    Raises:
        LookupError: genai-prices does not know the model.
        ValueError: genai-prices cannot pick the model's price.
    """
    counts = _plain_counts(usage)
    if counts is None:
        return None
    plan = plan_for(model_prices(model, provider_id=PRICE_PROVIDER_ID))
    return None if plan is None else plan.total(counts)


def _plain_counts(usage: TokenUsage) -> dict[str, int] | None:
    """The counts `calc_price` is given, by genai-prices usage key; None unless plain ints >= 0."""
    counts = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cache_read_tokens is not None:
        counts["cache_read_tokens"] = usage.cache_read_tokens
    if all(type(value) is int and value >= 0 for value in counts.values()):
        return counts
    return None


def _calc_price(usage: TokenUsage, model: str, web_searches: int = 0) -> Decimal | None:
    from genai_prices import Usage, calc_price

    tokens = Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
    )
    if web_searches:
        tokens.web_searches = web_searches
    try:
        calculation = calc_price(tokens, model, provider_id=PRICE_PROVIDER_ID)
    except (LookupError, ValueError) as exc:
        logger.debug("no price for model %r: %s", model, exc)
        return None
    return calculation.total_price


def _media_cost(usage: Mapping[str, JsonValue], model: str, web_searches: int) -> Decimal | None:
    # genai-prices' own reading of the metadata (its modality details), then its price.
    import genai_prices

    try:
        tokens = genai_prices.extract_usage(
            {"usageMetadata": dict(usage)}, provider_id=PRICE_PROVIDER_ID
        ).usage
        if web_searches:  # its extractor reads usageMetadata only, not grounding
            tokens.web_searches = web_searches
        return genai_prices.calc_price(tokens, model, provider_id=PRICE_PROVIDER_ID).total_price
    except (LookupError, ValueError) as exc:
        logger.debug("no price for model %r: %s", model, exc)
        return None


def context_window(model: str) -> int | None:
    """Return `model`'s context window in tokens from genai-prices' data; None when unknown."""
    from genai_prices.data_snapshot import get_snapshot

    try:
        _, info = get_snapshot().find_provider_model(
            price_model_name(model), None, PRICE_PROVIDER_ID, None
        )
    except LookupError:
        return None
    window = getattr(info, "context_window", None)
    return window if isinstance(window, int) and window > 0 else None
