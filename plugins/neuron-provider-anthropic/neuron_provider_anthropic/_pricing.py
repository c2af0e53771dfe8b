"""The USD cost of one call, from genai-prices' maintained data or the user's own prices.

genai-prices reads the response's `usage` object with its own Anthropic
extractor, so cache reads, 5-minute and 1-hour cache writes and web searches
are each priced at their own rate (Anthropic's `input_tokens` excludes them).
For flat prices the same arithmetic runs without genai-prices' general
machinery (`_flat_prices`), which was most of a call's CPU time.

Web searches are never priced at 0 by default: a `prices=` entry without
`web_searches_kcount` takes genai-prices' search fee for the model, and the
searches no price covers are counted (`Pricing.unpriced_searches`) so the loop
warns that the cost leaves them out.

Code execution's container time is never priced: the response does not say it
(`code_executions` counts the calls instead, for the loop's warning).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Final, TypeAlias

import genai_prices
from genai_prices.types import ModelPrice
from moneyed import Money
from pydantic import JsonValue

from layer0 import usd
from neuron_turn.loop.flat_price import search_fee
from neuron_turn.loop.hosted_tools import HostedToolCall

from ._flat_prices import model_prices, plan_for, usage_reader
from ._name import PROVIDER

PriceTable: TypeAlias = Mapping[str, Mapping[str, Decimal | str | int]]
"""Per model, USD prices per million tokens (e.g. `{"input_mtok": "0.5"}`)."""

PRICE_KEYS: Final = frozenset(
    {
        "input_mtok",
        "output_mtok",
        "cache_read_mtok",
        "cache_write_mtok",
        "cache_write_5m_mtok",
        "cache_write_1h_mtok",
        "web_searches_kcount",
    }
)
"""The price keys a user may set (genai-prices' names); all are optional.

Without `web_searches_kcount`, a model's web searches cost genai-prices' fee for it;
where none is known they are left out of the cost, and the turn warns of them."""

_log = logging.getLogger(__name__)


class Pricing:
    """Prices calls: the user's prices for a model first, then genai-prices.

    Never a float: prices are Decimals, usage counts are integers.
    """

    __slots__ = ("_overrides",)

    def __init__(self, overrides: PriceTable | None = None) -> None:
        """Check and keep `overrides`.

        Raises:
            ValueError: an unknown price key, or a price that is not a decimal.
            TypeError: a price given as a float (it would not be exact).
        """
        self._overrides: Final = {
            model: _model_price(model, prices=prices) for model, prices in (overrides or {}).items()
        }

    def cost(self, usage: Mapping[str, JsonValue], *, model: str, requested: str) -> Money | None:
        """Return the cost of a call `model` answered with `usage`; None when the price is unknown.

        User prices are looked up by the answered model, then by the `requested`
        name (an alias such as `claude-haiku-4-5`); genai-prices by the answered model.
        A user price without `web_searches_kcount` bills the call's web searches at
        genai-prices' fee for the model; see `unpriced_searches` for those none prices.
        """
        price = self._override(model, requested)
        if price is not None and getattr(price, "web_searches_kcount", None) is None:
            if web_searches(usage) > 0:
                price = _with_search_fee(price, search_fee(model, requested, provider_id=PROVIDER))
        try:
            flat = _flat_cost(usage, model, price)
            if flat is not None:
                return usd(flat)
            extracted = genai_prices.extract_usage({"usage": usage}, provider_id=PROVIDER).usage
            if price is not None:
                return usd(price.calc_price(extracted)["total_price"])
            return usd(genai_prices.calc_price(extracted, model, provider_id=PROVIDER).total_price)
        except LookupError:
            return None  # a model genai-prices does not know
        except ValueError as exc:
            # Usage genai-prices cannot read (e.g. a negative count): an unknown cost,
            # which the loop reports, beats failing a call that succeeded.
            _log.warning("cannot price a call answered by %s: %s", model, exc)
            return None

    def unpriced_searches(
        self, usage: Mapping[str, JsonValue], *, model: str, requested: str
    ) -> int:
        """How many of the call's web searches its `cost` leaves out, no price being known.

        The loop warns of them (`ProviderResponse.unpriced_web_searches`) rather than
        let a budget count them as free.
        """
        searches = web_searches(usage)
        if searches == 0:
            return 0
        price = self._override(model, requested)
        if price is not None and getattr(price, "web_searches_kcount", None) is not None:
            return 0
        return 0 if search_fee(model, requested, provider_id=PROVIDER) is not None else searches

    def _override(self, model: str, requested: str) -> ModelPrice | None:
        price = self._overrides.get(model)
        return self._overrides.get(requested) if price is None else price


def web_searches(usage: Mapping[str, JsonValue]) -> int:
    """The web searches `usage` counts (`server_tool_use.web_search_requests`); 0 if none."""
    tools = usage.get("server_tool_use")
    count = tools.get("web_search_requests") if isinstance(tools, Mapping) else None
    # Anything but a plain count is genai-prices' to refuse when it prices the call.
    return count if type(count) is int and count > 0 else 0


def code_executions(calls: Iterable[HostedToolCall]) -> int:
    """How many of a response's hosted `calls` ran in a code execution container.

    Their fee is left out of the cost, so the loop warns of them
    (`ProviderResponse.unpriced_code_executions`) rather than count them as free.
    """
    # Anthropic's pricing page (https://platform.claude.com/docs/en/about-claude/pricing,
    # "Code execution tool", read 2026-11-29): execution time is billed at $0.05 per hour
    # per container, with a 5-minute minimum, after 1,550 free hours per organization per
    # month. The response says neither the container's time nor what is left of the
    # organization's free hours, so no call's fee is exact: each is counted, never priced
    # at $0. (The same page makes code execution free in a request that includes
    # `web_search_20260209` or `web_fetch_20260209`; this provider sends neither.)
    # `hosted_calls` names code execution's own tools (`bash_code_execution`,
    # `text_editor_code_execution`) `code_execution`.
    return sum(1 for call in calls if call.name == "code_execution")


def _with_search_fee(price: ModelPrice, fee: Decimal | None) -> ModelPrice:
    """`price` with genai-prices' web search `fee` added (none known: `price` as it is)."""
    if fee is None:
        return price
    prices = {key: value for key, value in vars(price).items() if not key.startswith("_")}
    return ModelPrice(**{**prices, "web_searches_kcount": fee})


def _flat_cost(
    usage: Mapping[str, JsonValue], model: str, price: ModelPrice | None
) -> Decimal | None:
    """The cost by genai-prices' own arithmetic without its general path; None: use that path.

    Raises:
        LookupError: genai-prices does not know `model` (and no user price is given).
    """
    reader = usage_reader(PROVIDER)
    counts = None if reader is None else reader.counts(usage)
    if counts is None:
        return None
    plan = plan_for(price if price is not None else model_prices(model, provider_id=PROVIDER))
    return None if plan is None else plan.total(counts)


def _model_price(model: str, *, prices: Mapping[str, Decimal | str | int]) -> ModelPrice:
    unknown = sorted(set(prices) - PRICE_KEYS)
    if unknown:
        raise ValueError(
            f"unknown price key(s) {', '.join(unknown)} for model {model!r}; "
            f"valid keys: {', '.join(sorted(PRICE_KEYS))}"
        )
    decimals = {key: _decimal(value, model=model, key=key) for key, value in prices.items()}
    return ModelPrice(**decimals)


def _decimal(value: object, *, model: str, key: str) -> Decimal:
    if isinstance(value, float):
        raise TypeError(f"price {key} of {model!r} is a float; give a decimal string like '0.5'")
    if isinstance(value, bool) or not isinstance(value, Decimal | str | int):
        raise ValueError(f"price {key} of {model!r} must be a decimal string, got {value!r}")
    try:
        amount = Decimal(value)
    except InvalidOperation as exc:
        raise ValueError(f"price {key} of {model!r} is not a decimal: {value!r}") from exc
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"price {key} of {model!r} must be a finite, non-negative decimal")
    return amount


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
