"""What a call cost: the user's prices first, then genai-prices' maintained data.

Amounts are `Decimal` throughout and end as `moneyed.Money` in USD; no float
is ever involved. genai-prices is imported on first use, so a provider for a
local server (which costs nothing) never pays for loading its data.

Hosted web searches are never priced at 0 by default: a `prices=` entry without
`web_searches_kcount` takes genai-prices' search fee for the model (when prices
are looked up), and searches no price covers are counted by
`Pricer.unpriced_searches` so the loop warns that the cost leaves them out.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Final, TypeAlias

from moneyed import Money

from neuron_turn.loop.flat_price import search_fee
from neuron_turn.loop.price_table import price_entry
from neuron_turn.loop.provider import TokenUsage

logger = logging.getLogger("neuron_provider_openai")

PriceTable: TypeAlias = Mapping[str, Mapping[str, "str | Decimal | int"]]
"""`{model: {"input_mtok": "0.15", "output_mtok": "0.6", "cache_read_mtok": "0.075"}}`,
USD per million tokens as Decimal strings (or Decimals / ints; never floats).
`cache_write_mtok` is accepted too, and `web_searches_kcount` (USD per 1,000 hosted
web searches, genai-prices' name; without it a model's searches cost genai-prices' fee
for it, and where none is known they are left out of the cost with a warning)."""

_PRICE_KEYS: Final = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")
_USER_PRICE_KEYS: Final = (*_PRICE_KEYS, "web_searches_kcount")
_MTOK: Final = Decimal(1_000_000)
_KCOUNT: Final = Decimal(1_000)
_ZERO: Final = Money(Decimal(0), "USD")


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens for one model; a missing cache price bills those tokens as input.

    `web_searches_kcount` is USD per 1,000 hosted web searches; missing, `cost` leaves
    them out (`Pricer` fills it from genai-prices, or reports them as unpriced).
    """

    input_mtok: Decimal
    output_mtok: Decimal
    cache_read_mtok: Decimal | None = None
    cache_write_mtok: Decimal | None = None
    web_searches_kcount: Decimal | None = None

    def cost(self, usage: TokenUsage, *, web_searches: int = 0) -> Decimal:
        """The cost of `usage` and of `web_searches` hosted web searches.

        `usage.input_tokens` include cache reads and writes (OpenAI's count).
        """
        read = min(usage.cache_read_tokens or 0, usage.input_tokens)
        written = min(usage.cache_creation_tokens or 0, usage.input_tokens - read)
        read_price = self.input_mtok if self.cache_read_mtok is None else self.cache_read_mtok
        write_price = self.input_mtok if self.cache_write_mtok is None else self.cache_write_mtok
        total = (
            (usage.input_tokens - read - written) * self.input_mtok
            + read * read_price
            + written * write_price
            + usage.output_tokens * self.output_mtok
        )
        if web_searches > 0 and self.web_searches_kcount is not None:
            return total / _MTOK + web_searches * self.web_searches_kcount / _KCOUNT
        return total / _MTOK


def _per_image(
    low: tuple[str, str, str], medium: tuple[str, str, str], high: tuple[str, str, str]
) -> dict[tuple[str, str], Decimal]:
    sizes = ("1024x1024", "1024x1536", "1536x1024")
    return {
        (quality, size): Decimal(price)
        for quality, prices in (("low", low), ("medium", medium), ("high", high))
        for size, price in zip(sizes, prices, strict=True)
    }


IMAGE_PRICES: Final[Mapping[str, Mapping[tuple[str, str], Decimal]]] = {
    # USD per image by quality and size, from OpenAI's model page
    # (https://developers.openai.com/api/docs/models/gpt-image-1-mini, "Image generation,
    # per image"), looked up 2026-11-29. Other image models are priced by OpenAI in
    # image tokens only, with no price per image found: their images are left out of
    # the cost with a warning rather than guessed.
    "gpt-image-1-mini": _per_image(
        low=("0.005", "0.006", "0.006"),
        medium=("0.011", "0.015", "0.015"),
        high=("0.036", "0.052", "0.052"),
    ),
}
"""USD per image the Responses API's image tool makes, by image model, then (quality, size)."""


def image_fee(model: str | None, quality: str | None, size: str | None) -> Decimal | None:
    """USD for one image of `model` at `quality` and `size`; None when no price is known.

    None too when any of the three is not known (the image model the API picked, a
    quality `auto` it did not resolve, a size it did not report).
    """
    if model is None or quality is None or size is None:
        return None
    return IMAGE_PRICES.get(model, {}).get((quality, size))


def parse_prices(table: PriceTable | None) -> dict[str, ModelPrice]:
    """Check and convert the `prices=` option.

    Raises:
        ValueError: an unknown key, a missing input/output price, a float or a
            value that is not a non-negative decimal.
    """
    return {model: _model_price(model, entry) for model, entry in (table or {}).items()}


def _model_price(model: str, entry: Mapping[str, str | Decimal | int]) -> ModelPrice:
    return ModelPrice(**price_entry(model, entry, keys=_USER_PRICE_KEYS, example="0.15"))


@dataclass(frozen=True, slots=True)
class Pricer:
    """Prices calls for one provider instance.

    Order: `overrides` for the answered model, then for the requested model;
    then genai-prices (when `lookup` is on) for the answered model; then
    0 USD when `lookup` is off (a self-hosted server), else None (unknown).
    """

    overrides: Mapping[str, ModelPrice]
    lookup: bool
    provider_id: str | None = None
    provider_api_url: str | None = None

    def cost(
        self,
        usage: TokenUsage,
        *,
        model: str,
        requested_model: str,
        audio: tuple[int, int] | None = None,
        web_searches: int = 0,
    ) -> Money | None:
        """The call's cost in USD, or None when the model's price is unknown.

        `audio` (the audio tokens among the input and output ones) is priced at the
        model's audio prices by genai-prices; `prices=` entries have one input price
        for all. `web_searches` (the hosted web searches the API ran) are priced per
        search by a `prices=` entry's `web_searches_kcount`, else (when `lookup` is on)
        by genai-prices' for the model; searches neither prices are left out, and
        `unpriced_searches` counts them.
        """
        price = self.overrides.get(model) or self.overrides.get(requested_model)
        if price is not None:
            if web_searches > 0 and price.web_searches_kcount is None and self.lookup:
                fee = self._search_fee(model, requested_model)
                price = replace(price, web_searches_kcount=fee)
            return Money(price.cost(usage, web_searches=web_searches), "USD")
        if not self.lookup:
            return _ZERO
        if audio is not None or web_searches > 0:
            # The flat prices know tokens only: a search fee is genai-prices' to add.
            amount = self._calc_price(usage, model, audio, web_searches)
        else:
            amount = self._price_data_cost(usage, model)
        return None if amount is None else Money(amount, "USD")

    def unpriced_searches(self, *, model: str, requested_model: str, web_searches: int) -> int:
        """How many of a call's `web_searches` its `cost` leaves out, no price being known.

        The loop warns of them (`ProviderResponse.unpriced_web_searches`) rather than
        let a budget count them as free. A self-hosted server's calls (no `prices=`
        entry, `lookup` off) cost nothing, searches included: none is unpriced.
        """
        if web_searches <= 0:
            return 0
        price = self.overrides.get(model) or self.overrides.get(requested_model)
        if price is not None and price.web_searches_kcount is not None:
            return 0
        if not self.lookup:
            return 0 if price is None else web_searches
        return 0 if self._search_fee(model, requested_model) is not None else web_searches

    def _search_fee(self, model: str, requested_model: str) -> Decimal | None:
        """genai-prices' USD per 1,000 web searches for the answered model, else the requested."""
        return search_fee(
            model, requested_model, provider_id=self.provider_id, api_url=self.provider_api_url
        )

    def _price_data_cost(self, usage: TokenUsage, model: str) -> Decimal | None:
        from genai_prices.data_snapshot import get_snapshot

        # Keyed by the UTC day (genai-prices' start dates are UTC) and the data in use.
        day, data = datetime.now(tz=UTC).date(), id(get_snapshot())
        try:
            flat = flat_price(model, self.provider_id, self.provider_api_url, day, data)
        except LookupError as exc:
            logger.debug("no price for model %r: %s", model, exc)
            return None
        if flat is not None and _plain_counts(usage):
            return flat.cost(usage)
        return self._calc_price(usage, model)

    def _calc_price(
        self,
        usage: TokenUsage,
        model: str,
        audio: tuple[int, int] | None = None,
        web_searches: int = 0,
    ) -> Decimal | None:
        from genai_prices import Usage, calc_price

        # Audio counts past their totals are the API's error; genai-prices would refuse them.
        audio_in, audio_out = audio or (None, None)
        tokens = Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_creation_tokens,
            input_audio_tokens=None if audio_in is None else min(audio_in, usage.input_tokens),
            output_audio_tokens=None if audio_out is None else min(audio_out, usage.output_tokens),
            web_searches=web_searches or None,
        )
        try:
            if self.provider_id is not None:
                calculation = calc_price(tokens, model, provider_id=self.provider_id)
            else:
                calculation = calc_price(tokens, model, provider_api_url=self.provider_api_url)
        except (LookupError, ValueError) as exc:
            logger.debug("no price for model %r: %s", model, exc)
            return None
        return calculation.total_price


@functools.lru_cache(maxsize=256)
def flat_price(
    model: str, provider_id: str | None, provider_api_url: str | None, day: date, data: int = 0
) -> ModelPrice | None:
    """genai-prices' token prices for `model` when they are flat, else None (use `calc_price`).

    genai-prices' general `calc_price` walks its unit registry on every call
    (~140 µs, half of `complete`'s CPU time). For a model whose input,
    output and cache prices are plain Decimals (no tiers), the same sum over
    our four token counts is done here from prices resolved once per model
    and day (prices can change on a date; `data` is the id of genai-prices'
    snapshot, which an auto-update replaces). Tiered prices, prices that change
    within a day (off-peak hours), any other priced unit (a per-request fee,
    audio...), or genai-prices internals that moved, fall back to `calc_price`.

    Raises:
        LookupError: genai-prices does not know the model (not cached).
    """
    from genai_prices.data_snapshot import get_snapshot

    snapshot = get_snapshot()
    try:
        _, info = snapshot.find_provider_model(model, None, provider_id, provider_api_url)
        if _changes_within_a_day(info.prices):
            return None
        prices = info.get_prices(datetime.now(tz=UTC))
        priced = {key for key, value in vars(prices).items() if value is not None and key[0] != "_"}
    except (AttributeError, TypeError):  # genai-prices internals changed
        return None
    if not _only_tokens_we_count(priced):
        return None
    input_mtok, output_mtok, read_mtok, write_mtok = (
        getattr(prices, key, None) for key in _PRICE_KEYS
    )
    if not isinstance(input_mtok, Decimal) or not isinstance(output_mtok, Decimal):
        return None
    if not all(value is None or isinstance(value, Decimal) for value in (read_mtok, write_mtok)):
        return None
    return ModelPrice(input_mtok, output_mtok, read_mtok, write_mtok)


def _changes_within_a_day(prices: object) -> bool:
    """Whether a conditional price depends on more than the date (a time of day)."""
    from genai_prices.types import StartDateConstraint

    if not isinstance(prices, list):
        return False
    return any(
        condition.constraint is not None
        and not isinstance(condition.constraint, StartDateConstraint)
        for condition in prices
    )


def _only_tokens_we_count(price_keys: set[str]) -> bool:
    """Whether the four token prices are all that apply to our usage, as genai-prices sums it.

    Other priced units count nothing the flat path is given (web searches: 0, since
    an answer with any is priced by `calc_price`), unless they are tokens too (audio,
    a cache duration: they split our counts) or a fee per request (always 1). Prices
    genai-prices would refuse to combine are left to it, so it says so itself.
    """
    from genai_prices.units import _get_registry
    from genai_prices.validation import validate_priced_units

    registry = _get_registry()
    try:
        units = [registry.unit_for_price_key(key) for key in price_keys]
        validate_priced_units(units, registry)
    except (KeyError, ValueError):
        return False
    return all(
        unit.price_key in _PRICE_KEYS or unit.dimensions.get("family") not in {"tokens", "requests"}
        for unit in units
    )


def _plain_counts(usage: TokenUsage) -> bool:
    """Whether genai-prices accepts `usage`: cache reads and writes are part of the input."""
    read = usage.cache_read_tokens or 0
    written = usage.cache_creation_tokens or 0
    return min(usage.input_tokens, usage.output_tokens, read, written) >= 0 and (
        read + written <= usage.input_tokens
    )


def context_window(
    model: str, *, provider_id: str | None, provider_api_url: str | None = None
) -> int | None:
    """Return `model`'s context window in tokens from genai-prices' data; None when unknown."""
    from genai_prices.data_snapshot import get_snapshot

    try:
        _, info = get_snapshot().find_provider_model(model, None, provider_id, provider_api_url)
    except LookupError:
        return None
    window = getattr(info, "context_window", None)
    return window if isinstance(window, int) and window > 0 else None
