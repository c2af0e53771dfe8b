"""genai-prices' own arithmetic for a flat price, without its general machinery.

genai-prices' `calc_price` resolves the model's price, walks its unit
registry, checks the price's coverage and infers missing counts on every
call: half or more of a provider's `complete` CPU time. For the common case
(every usage count a plain non-negative int, every price a plain Decimal,
no tiers) the result depends only on the model's price object and the
counts, so `plan_for` reads the price object once and `FlatPlan.total`
repeats genai-prices' steps (the same leaf decomposition and Decimal
operations in the same order) for each call. Anything outside that case
gives None and the caller uses genai-prices' general path, so the price is
never different and its errors (bad usage, invalid prices) are raised by
genai-prices itself.

genai-prices is a dependency of the providers that price with it, not of
the core: it is imported only when one of them asks for a plan. Relies on
its internals (the unit registry, `ModelPrice.__dict__`); internals that
moved (an AttributeError or TypeError while reading them) also give None.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

__all__ = ["FlatPlan", "model_prices", "plan_for", "search_fee"]


@dataclass(frozen=True, slots=True)
class FlatPlan:
    """A model's flat prices with their units, ready to price counts as genai-prices does.

    `leaves`: each priced usage key with the priced keys it contains (cache
    reads inside input tokens...), most specific first, as genai-prices'
    `compute_leaf_values` orders them. `prices`: (usage key, USD price,
    per how many units) in the price object's own order, which is the order
    genai-prices adds the amounts in.
    """

    leaves: tuple[tuple[str, tuple[str, ...]], ...]
    prices: tuple[tuple[str, Decimal, int], ...]

    def total(self, counts: Mapping[str, int]) -> Decimal | None:
        """The total in USD for `counts`; None when genai-prices must decide (an error case).

        `counts` are the usage genai-prices would be given, by its usage key
        (`input_tokens`, `cache_read_tokens`...), each a plain non-negative
        int; a key the usage does not report is absent (not None).
        """
        positive = frozenset(key for key, value in counts.items() if value > 0)
        leaf: dict[str, int] = {}
        for key, inner in self.leaves:
            value = counts.get(key)
            if value is None:
                if not _zero_when_missing(key, positive):
                    return None  # genai-prices refuses this usage: let it say why
                value = 0
            value -= sum(leaf[other] for other in inner)
            if value < 0:
                return None
            leaf[key] = value
        total = Decimal(0)
        for key, price, per in self.prices:
            count = 1 if key == "requests" else leaf[key]
            total += price * Decimal(count) / per
        return total


@functools.lru_cache(maxsize=1024)
def _zero_when_missing(usage_key: str, positive: frozenset[str]) -> bool:
    """Whether genai-prices reads an unreported `usage_key` as 0 given which counts are positive."""
    from genai_prices.types import Usage

    try:
        getattr(Usage(**dict.fromkeys(positive, 1)), usage_key)
    except ValueError:
        return False
    return True


_plans: dict[int, tuple[object, FlatPlan | None]] = {}


def plan_for(model_price: object) -> FlatPlan | None:
    """The plan for a genai-prices `ModelPrice`, or None when it is not flat (tiers...).

    Cached by the price object itself: genai-prices returns the same object
    for a model until its data or the date changes which price applies.
    """
    cached = _plans.get(id(model_price))
    if cached is not None and cached[0] is model_price:
        return cached[1]
    plan = _plan(model_price)
    if len(_plans) >= 1024:
        _plans.clear()
    _plans[id(model_price)] = (model_price, plan)
    return plan


def _plan(model_price: object) -> FlatPlan | None:
    from genai_prices.decompose import is_descendant_or_self
    from genai_prices.types import ModelPrice
    from genai_prices.units import _get_registry
    from genai_prices.validation import validate_priced_units

    if type(model_price) is not ModelPrice:
        return None
    registry = _get_registry()
    try:
        items = [
            (key, value)
            for key, value in vars(model_price).items()
            if not key.startswith("_") and value is not None
        ]
        if not all(_flat_price(key, value, registry) for key, value in items):
            return None
        units = [registry.unit_for_price_key(key) for key, _ in items]
        validate_priced_units(units, registry)
    except (AttributeError, TypeError, KeyError, ValueError):
        return None  # not flat, or invalid: genai-prices says so itself
    counted = sorted(
        (unit for unit in units if unit.usage_key != "requests"),
        key=lambda unit: (-len(unit.dimensions), unit.usage_key),
    )
    leaves = tuple(
        (
            unit.usage_key,
            tuple(
                other.usage_key
                for other in counted
                if other is not unit and is_descendant_or_self(unit, other)
            ),
        )
        for unit in counted
    )
    prices = tuple(
        (unit.usage_key, value, unit.per) for unit, (_, value) in zip(units, items, strict=True)
    )
    return FlatPlan(leaves, prices)


def _flat_price(key: str, value: object, registry: Any) -> bool:
    return (
        key in registry._all_price_keys
        and isinstance(value, Decimal)
        and value.is_finite()
        and value >= 0
    )


def search_fee(*models: str, provider_id: str | None, api_url: str | None = None) -> Decimal | None:
    """genai-prices' USD per 1,000 hosted web searches for the first of `models` it has one for.

    None when it knows none: a model it does not know, or no fee, or a tiered one
    (no single price per search), which the caller reports as unpriced. Read only
    for a call that searched, so it is not cached as a flat plan is.
    """
    from genai_prices.data_snapshot import get_snapshot

    for model in models:
        try:
            _, info = get_snapshot().find_provider_model(model, None, provider_id, api_url)
        except LookupError:
            continue  # a model genai-prices does not know: try the next name
        fee = getattr(info.get_prices(datetime.now(tz=UTC)), "web_searches_kcount", None)
        if isinstance(fee, Decimal):
            return fee
    return None


def model_prices(model: str, *, provider_id: str) -> object:
    """genai-prices' price object for `model` now, as `calc_price` picks it (no price context).

    A price that changes with the time of day is picked for this moment, as
    `calc_price` would; Groq's Whisper minimum (which `calc_price` applies to
    the usage, not the price) is not, so Groq is not priced through here.

    Raises:
        LookupError: genai-prices does not know the model.
    """
    from genai_prices.data_snapshot import get_snapshot

    _, info = get_snapshot().find_provider_model(model, None, provider_id, None)
    return info.get_prices(datetime.now(tz=UTC))
