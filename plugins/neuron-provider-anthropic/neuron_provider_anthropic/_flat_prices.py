"""genai-prices' Anthropic usage extractor, read once, for the flat-price path.

`genai_prices.extract_usage` walks the provider's extractor on every call;
with `calc_price` that was about 60% of a whole `complete`'s CPU time. For
the common case (every usage count a plain non-negative int) `UsageReader`
gives the counts the extractor would, from mappings read once, and the
core's `neuron_turn.loop.flat_price` prices them with genai-prices' own
arithmetic for a flat price (re-exported here as `FlatPlan`, `plan_for` and
`model_prices`). Anything outside that case returns None and the caller uses
genai-prices' general path, so the price is never different and its errors
(bad usage, invalid prices) are raised by genai-prices itself.

Relies on genai-prices internals (the unit registry, the extractor's
mappings); internals that moved (an AttributeError or TypeError while
reading them) also fall back to the general path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from neuron_turn.loop.flat_price import FlatPlan, model_prices, plan_for

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
