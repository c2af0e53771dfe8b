"""genai-prices' own arithmetic for the common call, without its general machinery.

`genai_prices.extract_usage` and `calc_price` walk the unit registry, check
the price's coverage and infer missing counts on every call: about 60% of a
whole `complete`'s CPU time. For the common case (every usage count a plain
non-negative int, every price a plain Decimal, no tiers) the result depends
only on the provider's extractor, the model's price object and the counts,
so this module reads the first two once and then repeats genai-prices' steps
(the same sums, leaf decomposition and Decimal operations in the same order)
for each call. Anything outside that case returns None and the caller uses
genai-prices' general path, so the price is never different and its errors
(bad usage, invalid prices) are raised by genai-prices itself.

Relies on genai-prices internals (the unit registry, `ModelPrice.__dict__`,
the extractor's mappings); internals that moved (an AttributeError or
TypeError while reading them) also fall back to the general path.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final

__all__ = ["FlatPlan", "UsageReader", "model_prices", "plan_for", "usage_reader"]

_MISSING: Final = object()


@dataclass(frozen=True, slots=True)
class _Mapping:
    steps: tuple[str, ...]
    last: str
    dest: str
    required: bool


class UsageReader:
    """One provider extractor's mappings, read from a raw `usage` object without genai-prices.

    Gives the counts `genai_prices.extract_usage({"usage": usage})` would, or
    None when the object holds anything but plain non-negative ints where the
    mappings look (a float, a Decimal, a bool, a negative or a missing
    required count): genai-prices then reads (or refuses) it itself.
    """

    __slots__ = ("_mappings",)

    def __init__(self, mappings: Sequence[_Mapping]) -> None:
        self._mappings: Final = tuple(mappings)

    def counts(self, usage: Mapping[str, Any]) -> dict[str, int] | None:
        """The usage counts by genai-prices usage key, or None (use the general path)."""
        counts: dict[str, int] = {}
        for mapping in self._mappings:
            value = _read(usage, mapping)
            if value is None:
                if mapping.required:
                    return None
                continue
            if type(value) is not int or value < 0:
                return None
            counts[mapping.dest] = counts.get(mapping.dest, 0) + value
        return counts or None


def _read(usage: Mapping[str, Any], mapping: _Mapping) -> object:
    data: object = usage
    for step in mapping.steps:
        if not isinstance(data, Mapping):
            return _MISSING  # not a count: the general path decides what it means
        data = data.get(step)
    if data is None:
        return None
    if not isinstance(data, Mapping):
        return _MISSING
    return data.get(mapping.last)


def usage_reader(provider_id: str, api_flavor: str = "default") -> UsageReader | None:
    """The reader for `provider_id`'s extractor in the current genai-prices data; None if odd."""
    from genai_prices.data_snapshot import get_snapshot

    try:
        provider = get_snapshot().find_provider(None, provider_id, None)
    except LookupError:
        return None
    key = (id(provider), api_flavor)
    cached = _readers.get(key)
    if cached is not None and cached[0] is provider:
        return cached[1]
    reader = _reader(provider, api_flavor)
    _readers[key] = (provider, reader)  # one per snapshot a process loads: a handful
    return reader


_readers: dict[tuple[int, str], tuple[object, UsageReader | None]] = {}


def _reader(provider: Any, api_flavor: str) -> UsageReader | None:
    from genai_prices.units import _get_registry

    try:
        extractor = next(e for e in provider.extractors or () if e.api_flavor == api_flavor)
        reported = _get_registry()._reported_usage_keys
        root = [extractor.root] if isinstance(extractor.root, str) else list(extractor.root)
        if root != ["usage"]:
            return None
        mappings = []
        for mapping in extractor.mappings:
            if mapping.dest not in reported:
                continue  # genai-prices skips it too
            path = [mapping.path] if isinstance(mapping.path, str) else list(mapping.path)
            if not all(isinstance(step, str) for step in path):
                return None  # an array match: leave it to genai-prices
            *steps, last = path
            mappings.append(_Mapping(tuple(steps), last, mapping.dest, bool(mapping.required)))
    except (AttributeError, TypeError, StopIteration):
        return None
    return UsageReader(mappings)


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
        """The total in USD for `counts`; None when genai-prices must decide (an error case)."""
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


def model_prices(model: str, *, provider_id: str) -> object:
    """genai-prices' price object for `model` now, as `calc_price` picks it (no price context).

    Raises:
        LookupError: genai-prices does not know the model.
    """
    from genai_prices.data_snapshot import get_snapshot

    _, info = get_snapshot().find_provider_model(model, None, provider_id, None)
    return info.get_prices(datetime.now(tz=UTC))
