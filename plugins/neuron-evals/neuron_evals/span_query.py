"""`SpanQuery`: the conditions a span must meet, as pydantic-evals' `SpanQuery`.

A query is a plain mapping, so a dataset file holds it as it is
(`{HasMatchingSpan: {query: {name_equals: execute_tool add}}}`), and the
files' JSON Schema describes it. Every condition given must hold; an empty
query matches every span. `neuron_evals.span_tree` matches it against spans.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from pydantic import ConfigDict, with_config

# pydantic reads a TypedDict of `typing` only from Python 3.12 on.
from typing_extensions import TypedDict

__all__ = ["MAX_QUERY_DEPTH", "QUERY_STEP_LIMIT", "SpanQuery"]

MAX_QUERY_DEPTH: Final = 32
"""How deeply queries may nest (`not_`, `some_child_has`...); deeper is a `SpanQueryError`.

Why a bound: a query from a file is data; one nested thousands deep would
exhaust the interpreter's stack while being read or matched.
"""

QUERY_STEP_LIMIT: Final = 1_000_000
"""The spans one query may visit on one case's tree before `SpanQueryLimitError` stops it."""


@with_config(ConfigDict(extra="forbid"))
class SpanQuery(TypedDict, total=False):
    """Conditions on one span, all of which must hold; as pydantic-evals' `SpanQuery`.

    - Name: `name_equals`, `name_contains`, `name_matches_regex` (Python's
      `re.match`: anchored at the start of the name, not at its end).
    - Attributes: `has_attributes` (each key present with that value; a list
      equals an attribute's sequence, and `true` never equals `1`),
      `has_attribute_keys` (each key present).
    - Duration, in seconds or as a `timedelta`: `min_duration`, `max_duration`.
    - Logic: `not_` (the query does not match), `and_` (all match), `or_` (at
      least one matches; alone at its level, as in pydantic-evals).
    - Children: `min_child_count`, `max_child_count`, `some_child_has`,
      `all_children_have`, `no_child_has`.
    - Descendants: `min_descendant_count`, `max_descendant_count`,
      `some_descendant_has`, `all_descendants_have`, `no_descendant_has`.
    - Ancestors: `min_depth`, `max_depth` (a root is at depth 0),
      `some_ancestor_has`, `all_ancestors_have`, `no_ancestor_has`.
    - `stop_recursing_when`: the descendant and ancestor conditions of the
      same query look no further than a span matching it (that span included).
    """

    name_equals: str
    name_contains: str
    name_matches_regex: str
    has_attributes: dict[str, Any]
    has_attribute_keys: list[str]
    min_duration: float | timedelta
    max_duration: float | timedelta
    not_: SpanQuery
    and_: list[SpanQuery]
    or_: list[SpanQuery]
    min_child_count: int
    max_child_count: int
    some_child_has: SpanQuery
    all_children_have: SpanQuery
    no_child_has: SpanQuery
    stop_recursing_when: SpanQuery
    min_descendant_count: int
    max_descendant_count: int
    some_descendant_has: SpanQuery
    all_descendants_have: SpanQuery
    no_descendant_has: SpanQuery
    min_depth: int
    max_depth: int
    some_ancestor_has: SpanQuery
    all_ancestors_have: SpanQuery
    no_ancestor_has: SpanQuery
