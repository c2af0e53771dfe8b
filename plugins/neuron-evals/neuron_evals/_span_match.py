"""How a `SpanQuery` is checked once, then matched against spans within a step budget (private).

Spans' names and attributes may hold model text, and a query may come from a
file: a query is checked whole before it runs (its nesting bounded, its regexes
compiled), the tree is walked without recursion, and one query's matching
stops after `span_query.QUERY_STEP_LIMIT` visited spans instead of hanging the run.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final, Protocol, Self, TypeVar, cast

from pydantic import TypeAdapter, ValidationError

from . import span_query
from .errors import SpanQueryError, SpanQueryLimitError
from .span_query import MAX_QUERY_DEPTH, SpanQuery


class SpanLike(Protocol):
    """What matching reads of a span: its name, attributes, time and place in the tree.

    `span_tree.SpanNode` has them; a protocol here, so that this module needs
    not import the tree that imports it.
    """

    @property
    def name(self) -> str:
        """The span's name."""
        ...

    @property
    def attributes(self) -> Mapping[str, object]:
        """The span's attributes."""
        ...

    @property
    def duration(self) -> timedelta:
        """How long the span ran."""
        ...

    @property
    def parent(self) -> Self | None:
        """The span it ran under (None: a root)."""
        ...

    @property
    def children(self) -> Sequence[Self]:
        """The spans that ran under it, in start order."""
        ...


N = TypeVar("N", bound=SpanLike)

__all__ = ["CompiledQuery", "Matcher", "SpanLike", "checked_query", "compile_query", "same_value"]

_ADAPTER: Final = TypeAdapter(SpanQuery)
_ONE: Final = (
    "not_",
    "some_child_has",
    "all_children_have",
    "no_child_has",
    "stop_recursing_when",
    "some_descendant_has",
    "all_descendants_have",
    "no_descendant_has",
    "some_ancestor_has",
    "all_ancestors_have",
    "no_ancestor_has",
)
_MANY: Final = ("and_", "or_")
_COUNTS: Final = (
    "min_child_count",
    "max_child_count",
    "min_descendant_count",
    "max_descendant_count",
    "min_depth",
    "max_depth",
)


@dataclass(frozen=True, eq=False)
class CompiledQuery:
    """A checked `SpanQuery`: its regex compiled, its durations as `timedelta`s."""

    name_equals: str | None = None
    name_contains: str | None = None
    name_regex: re.Pattern[str] | None = None
    has_attributes: tuple[tuple[str, object], ...] = ()
    has_attribute_keys: tuple[str, ...] = ()
    min_duration: timedelta | None = None
    max_duration: timedelta | None = None
    and_: tuple[CompiledQuery, ...] = ()
    or_: tuple[CompiledQuery, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    """`min_child_count` ... `max_depth`, those given."""
    queries: Mapping[str, CompiledQuery] = field(default_factory=dict)
    """`not_`, `some_child_has` ... `no_ancestor_has`, `stop_recursing_when`, those given."""


def _joined(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _check_depth(query: object) -> None:
    """Refuse a query nested deeper than `MAX_QUERY_DEPTH` (or one that contains itself).

    Walked with a stack of its own, so depth alone can never exhaust Python's.
    """
    stack: list[tuple[object, int, str]] = [(query, 1, "")]
    while stack:
        item, depth, path = stack.pop()
        if not isinstance(item, Mapping):
            continue  # not a query: validation names what it is
        if depth > MAX_QUERY_DEPTH:
            raise SpanQueryError(path, f"nested more than {MAX_QUERY_DEPTH} queries deep")
        for key in _ONE:
            if key in item:
                stack.append((item[key], depth + 1, _joined(path, key)))
        for key in _MANY:
            items = item.get(key)
            if isinstance(items, list | tuple):
                stack.extend(
                    (sub, depth + 1, _joined(_joined(path, key), index))
                    for index, sub in enumerate(items)
                )


def checked_query(query: object) -> SpanQuery:
    """`query` validated whole: its values as their types (a file's `PT2S` as a `timedelta`).

    Raises:
        SpanQueryError: as `compile_query`.
    """
    return _checked(query)[1]


def compile_query(query: object) -> CompiledQuery:
    """Check `query` whole and compile it for matching.

    Raises:
        SpanQueryError: it is no `SpanQuery` (an unknown condition, a value of
            the wrong type), nests too deeply, has a regex that does not
            compile, `or_` beside other conditions, or an empty `or_`/`and_`;
            the error names where.
    """
    compiled, _ = _checked(query)
    return compiled


def _checked(query: object) -> tuple[CompiledQuery, SpanQuery]:
    _check_depth(query)
    try:
        checked = _ADAPTER.validate_python(query)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = ""
        for part in first["loc"]:
            path = _joined(path, part)
        more = exc.error_count() - 1
        raise SpanQueryError(
            path, first["msg"] + (f" (and {more} more error(s))" if more else "")
        ) from exc
    return _compiled(checked, ""), checked


_PARSER: Final[Any] = importlib.import_module("re._parser")
"""The `re` module's own pattern parser (private to CPython since 3.11, as `sre_parse`
before): the shape of a pattern, read as `re` reads it."""
_REPEATS: Final = frozenset({"MAX_REPEAT", "MIN_REPEAT"})
"""Repeats that backtrack; a possessive one and an atomic group never do."""
_FENCES: Final = frozenset({"POSSESSIVE_REPEAT", "ATOMIC_GROUP"})
_ONE_CHARACTER: Final = frozenset({"LITERAL", "NOT_LITERAL", "IN", "ANY", "CATEGORY"})


def _backtracks(pattern: Any) -> bool:
    """Whether a repeat varying past one is all a repeating group must match: `(a+)+`, `(a*b?)*`.

    Such a pattern backtracks exponentially on a name that almost matches (a
    span's name may hold what a model wrote: a tool's name). A group that must
    also match something else (`(-[a-z]+)*`) splits its repetitions and is let
    through. Walked without recursion.
    """
    stack: list[Any] = [pattern]
    while stack:
        for op, av in stack.pop():
            name = str(op)
            if name in _FENCES:
                continue
            if name in _REPEATS:
                _, high, body = av
                if high > 1 and _varies(body) and not _anchored(body):
                    return True
                stack.append(body)
            else:
                stack.extend(_subpatterns(av))
    return False


def _varies(pattern: Any) -> bool:
    """Whether `pattern` holds, outside any fence, a repeat that may match more than once."""
    stack: list[Any] = [pattern]
    while stack:
        for op, av in stack.pop():
            name = str(op)
            if name in _FENCES:
                continue
            if name in _REPEATS and av[1] > 1 and av[1] != av[0]:
                return True
            stack.extend(_subpatterns(av))
    return False


def _anchored(pattern: Any) -> bool:
    """Whether `pattern` must match something besides what repeats in it (`-` in `-[a-z]+`)."""
    for op, av in pattern:
        name = str(op)
        if name in _ONE_CHARACTER:
            return True
        if name == "SUBPATTERN" and _anchored(av[3]):
            return True
    return False


def _subpatterns(av: Any) -> list[Any]:
    """The sub-patterns an opcode's argument holds (a group's, a branch's, a lookaround's)."""
    found: list[Any] = []
    pending = [av]
    while pending:
        value = pending.pop()
        if isinstance(value, _PARSER.SubPattern):
            found.append(value)
        elif isinstance(value, tuple | list):
            pending.extend(value)
    return found


def _seconds(value: float | timedelta) -> timedelta:
    return value if isinstance(value, timedelta) else timedelta(seconds=value)


def _compiled(query: SpanQuery, path: str) -> CompiledQuery:
    """`query`, already validated, compiled; its sub-queries in turn (depth is bounded)."""
    if "or_" in query and len(query) > 1:
        others = ", ".join(key for key in query if key != "or_")
        raise SpanQueryError(
            path, f"or_ cannot stand beside other conditions ({others}); put them in and_"
        )
    regex = None
    pattern = query.get("name_matches_regex")
    if pattern is not None:
        where = _joined(path, "name_matches_regex")
        try:
            regex = re.compile(pattern)
        except (re.error, RecursionError, OverflowError) as exc:
            raise SpanQueryError(where, f"{pattern!r} is not a regular expression: {exc}") from exc
        if _backtracks(_PARSER.parse(pattern)):
            raise SpanQueryError(
                where,
                f"{pattern!r} repeats a repetition ((a+)+): on a span name a model wrote it "
                "can take hours; repeat once, or make the inner one possessive (a++) or "
                "atomic ((?>a+))",
            )
    # Read by name in loops: the keys are validated, their values typed as above.
    by_key = cast(Mapping[str, Any], query)
    lists: dict[str, tuple[CompiledQuery, ...]] = {}
    for key in _MANY:
        items: list[SpanQuery] | None = by_key.get(key)
        if items is None:
            continue
        if not items:
            raise SpanQueryError(_joined(path, key), "needs at least one query")
        where = _joined(path, key)
        lists[key] = tuple(_compiled(sub, _joined(where, i)) for i, sub in enumerate(items))
    queries: dict[str, CompiledQuery] = {}
    for key in _ONE:
        sub: SpanQuery | None = by_key.get(key)
        if sub is not None:
            queries[key] = _compiled(sub, _joined(path, key))
    minimum, maximum = query.get("min_duration"), query.get("max_duration")
    return CompiledQuery(
        name_equals=query.get("name_equals"),
        name_contains=query.get("name_contains"),
        name_regex=regex,
        has_attributes=tuple(query.get("has_attributes", {}).items()),
        has_attribute_keys=tuple(query.get("has_attribute_keys", ())),
        min_duration=None if minimum is None else _seconds(minimum),
        max_duration=None if maximum is None else _seconds(maximum),
        and_=lists.get("and_", ()),
        or_=lists.get("or_", ()),
        counts={key: by_key[key] for key in _COUNTS if key in by_key},
        queries=queries,
    )


def same_value(actual: object, expected: object) -> bool:
    """Whether a span attribute's `actual` value is `expected`, as JSON would compare them.

    A sequence equals a list of equal items (OpenTelemetry keeps tuples, a file
    gives lists), and a bool equals only a bool (Python's `True == 1` would not do).
    """
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if isinstance(actual, str) or isinstance(expected, str):
        return actual == expected
    if isinstance(actual, Sequence) and isinstance(expected, Sequence):
        return len(actual) == len(expected) and all(
            same_value(one, other) for one, other in zip(actual, expected, strict=True)
        )
    return actual == expected


def _within(count: int, low: int | None, high: int | None) -> bool:
    return (low is None or count >= low) and (high is None or count <= high)


class Matcher:
    """Matches compiled queries against the spans of one tree, counting the spans it visits.

    Results are remembered per query and span, so a sub-query met again costs
    nothing; past `limit` visits it raises `SpanQueryLimitError`.
    """

    def __init__(self, limit: int | None = None) -> None:
        """A matcher allowed `limit` steps (None: `QUERY_STEP_LIMIT`)."""
        self.limit = span_query.QUERY_STEP_LIMIT if limit is None else limit
        self.steps = 0
        self._known: dict[tuple[int, int], bool] = {}
        self._depths: dict[int, int] = {}
        self._sizes: dict[int, int] = {}

    def step(self) -> None:
        """Count one visited span.

        Raises:
            SpanQueryLimitError: past the limit.
        """
        self.steps += 1
        if self.steps > self.limit:
            raise SpanQueryLimitError(self.limit)

    def matches(self, node: N, query: CompiledQuery) -> bool:
        """Whether `node` meets every condition of `query`.

        Raises:
            SpanQueryLimitError: matching took more than the limit's steps.
        """
        key = (id(query), id(node))
        known = self._known.get(key)
        if known is None:
            self.step()
            known = self._match(node, query)
            self._known[key] = known
        return known

    def depth(self, node: N) -> int:
        """How many ancestors `node` has, each span's depth worked out once."""
        path: list[N] = []
        current: N | None = node
        while current is not None and id(current) not in self._depths:
            path.append(current)
            current = current.parent
        depth = -1 if current is None else self._depths[id(current)]
        for one in reversed(path):
            self.step()
            depth += 1
            self._depths[id(one)] = depth
        return self._depths[id(node)]

    def size(self, node: N) -> int:
        """How many descendants `node` has, each span's count worked out once."""
        sizes = self._sizes
        stack: list[tuple[N, bool]] = [(node, False)]
        while stack:
            current, counted = stack.pop()
            if id(current) in sizes:
                continue
            children = current.children
            if counted:
                sizes[id(current)] = sum(1 + sizes[id(child)] for child in children)
            else:
                self.step()
                stack.append((current, True))
                stack.extend((child, False) for child in children if id(child) not in sizes)
        return sizes[id(node)]

    def descendants(self, node: N, stop: CompiledQuery | None = None) -> Iterator[N]:
        """`node`'s descendants depth first, in start order; none below a span matching `stop`."""
        stack = list(reversed(node.children))
        while stack:
            current = stack.pop()
            self.step()
            yield current
            if stop is None or not self.matches(current, stop):
                stack.extend(reversed(current.children))

    def ancestors(self, node: N, stop: CompiledQuery | None = None) -> Iterator[N]:
        """`node`'s ancestors, its parent first; none above a span matching `stop`."""
        current = node.parent
        while current is not None:
            self.step()
            yield current
            if stop is not None and self.matches(current, stop):
                return
            current = current.parent

    def _match(self, node: N, query: CompiledQuery) -> bool:
        if query.or_:
            return any(self.matches(node, sub) for sub in query.or_)
        sub = query.queries
        if "not_" in sub and self.matches(node, sub["not_"]):
            return False
        if not all(self.matches(node, one) for one in query.and_):
            return False
        return (
            self._own(node, query)
            and self._children(node, query)
            and self._descendants(node, query)
            and self._ancestors(node, query)
        )

    @staticmethod
    def _own(node: N, query: CompiledQuery) -> bool:
        """The conditions on the span alone: name, attributes, duration."""
        name = node.name
        if query.name_equals is not None and name != query.name_equals:
            return False
        if query.name_contains is not None and query.name_contains not in name:
            return False
        if query.name_regex is not None and query.name_regex.match(name) is None:
            return False
        attributes = node.attributes
        for key, value in query.has_attributes:
            if key not in attributes or not same_value(attributes[key], value):
                return False
        if any(key not in attributes for key in query.has_attribute_keys):
            return False
        duration = node.duration
        if query.min_duration is not None and duration < query.min_duration:
            return False
        return query.max_duration is None or duration <= query.max_duration

    def _children(self, node: N, query: CompiledQuery) -> bool:
        children = node.children
        counts = query.counts
        if not _within(len(children), counts.get("min_child_count"), counts.get("max_child_count")):
            return False
        return self._quantified(query, _CHILD_CONDITIONS, lambda: iter(children))

    def _descendants(self, node: N, query: CompiledQuery) -> bool:
        counts = query.counts
        low, high = counts.get("min_descendant_count"), counts.get("max_descendant_count")
        if (low is not None or high is not None) and not _within(self.size(node), low, high):
            return False
        stop = query.queries.get("stop_recursing_when")
        return self._quantified(query, _DESCENDANT_CONDITIONS, lambda: self.descendants(node, stop))

    def _ancestors(self, node: N, query: CompiledQuery) -> bool:
        counts = query.counts
        low, high = counts.get("min_depth"), counts.get("max_depth")
        if (low is not None or high is not None) and not _within(self.depth(node), low, high):
            return False
        stop = query.queries.get("stop_recursing_when")
        return self._quantified(query, _ANCESTOR_CONDITIONS, lambda: self.ancestors(node, stop))

    def _quantified(
        self,
        query: CompiledQuery,
        conditions: tuple[str, str, str],
        spans: Callable[[], Iterator[N]],
    ) -> bool:
        """Whether the `spans` (walked anew for each condition) meet `query`'s some/all/no ones.

        `conditions` names them: the query's key for "some span has", "every span
        has" and "no span has" (`some_child_has`, `all_children_have`, `no_child_has`).
        """
        some, every, none = conditions
        sub = query.queries
        if some in sub and not any(self.matches(one, sub[some]) for one in spans()):
            return False
        if every in sub and not all(self.matches(one, sub[every]) for one in spans()):
            return False
        return none not in sub or not any(self.matches(one, sub[none]) for one in spans())


_CHILD_CONDITIONS: Final = ("some_child_has", "all_children_have", "no_child_has")
_DESCENDANT_CONDITIONS: Final = ("some_descendant_has", "all_descendants_have", "no_descendant_has")
_ANCESTOR_CONDITIONS: Final = ("some_ancestor_has", "all_ancestors_have", "no_ancestor_has")
