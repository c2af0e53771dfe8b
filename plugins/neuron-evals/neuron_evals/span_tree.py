"""`SpanTree` and `SpanNode`: the spans a case's task made, as pydantic-evals' span tree.

An evaluator reads them from `EvaluatorContext.span_tree`: with
neuron-tracing-otel, one `invoke_agent {agent}` root per turn and, under it,
its `chat {model}` and `execute_tool {tool}` spans with their `gen_ai.*`
attributes. Spans are matched by a `SpanQuery` or by any function of a node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeAlias

from ._span_match import CompiledQuery, Matcher, compile_query
from .span_query import SpanQuery

__all__ = ["AttributeValue", "SpanNode", "SpanPredicate", "SpanTree"]

AttributeValue: TypeAlias = (
    str | bool | int | float | Sequence[str] | Sequence[bool] | Sequence[int] | Sequence[float]
)
"""A span attribute's value, as OpenTelemetry's `AttributeValue`."""


@dataclass(eq=False, repr=False)
class SpanNode:
    """One finished span of the tree, linked to its parent and children.

    `parent` and `children` are set by the `SpanTree` the node is given to.
    """

    name: str
    trace_id: int
    span_id: int
    parent_span_id: int | None
    start_timestamp: datetime
    end_timestamp: datetime
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    parent: SpanNode | None = field(default=None, init=False)
    """The span this one ran under, when it is in the tree (None: a root)."""
    _children: list[SpanNode] = field(default_factory=list, init=False)

    @property
    def duration(self) -> timedelta:
        """How long the span lasted."""
        return self.end_timestamp - self.start_timestamp

    @property
    def children(self) -> list[SpanNode]:
        """The spans directly under this one, in the order they started."""
        return list(self._children)

    @property
    def descendants(self) -> list[SpanNode]:
        """Every span under this one, depth first, siblings in the order they started."""
        return list(self._descendants(_every, None))

    @property
    def ancestors(self) -> list[SpanNode]:
        """The spans above this one, its parent first."""
        return self.find_ancestors(_every)

    def matches(self, query: SpanQuery | SpanPredicate) -> bool:
        """Whether this span meets `query` (or `query(node)` is true, for a function).

        Raises:
            SpanQueryError: `query` is no valid `SpanQuery`.
            SpanQueryLimitError: matching visited more than `QUERY_STEP_LIMIT` spans.
        """
        if callable(query):
            return bool(query(self))
        return Matcher().matches(self, compile_query(query))

    def find_children(self, query: SpanQuery | SpanPredicate) -> list[SpanNode]:
        """The children that match `query`."""
        test = _test(query)
        return [child for child in self._children if test(child)]

    def any_child(self, query: SpanQuery | SpanPredicate) -> bool:
        """Whether some child matches `query`."""
        return any(map(_test(query), self._children))

    def find_descendants(
        self,
        query: SpanQuery | SpanPredicate,
        stop_recursing_when: SpanQuery | SpanPredicate | None = None,
    ) -> list[SpanNode]:
        """The descendants that match `query`, depth first, in the order siblings started.

        None is looked for below a span matching `stop_recursing_when` (that
        span itself is).
        """
        return list(self._descendants(query, stop_recursing_when))

    def any_descendant(
        self,
        query: SpanQuery | SpanPredicate,
        stop_recursing_when: SpanQuery | SpanPredicate | None = None,
    ) -> bool:
        """Whether some descendant matches `query` (see `find_descendants`)."""
        return next(self._descendants(query, stop_recursing_when), None) is not None

    def find_ancestors(
        self,
        query: SpanQuery | SpanPredicate,
        stop_recursing_when: SpanQuery | SpanPredicate | None = None,
    ) -> list[SpanNode]:
        """The ancestors that match `query`, the nearest first.

        None is looked for above a span matching `stop_recursing_when` (that
        span itself is).
        """
        stop = None if stop_recursing_when is None else _test(stop_recursing_when)
        test = _test(query)
        found: list[SpanNode] = []
        current = self.parent
        while current is not None:
            if test(current):
                found.append(current)
            if stop is not None and stop(current):
                break
            current = current.parent
        return found

    def any_ancestor(
        self,
        query: SpanQuery | SpanPredicate,
        stop_recursing_when: SpanQuery | SpanPredicate | None = None,
    ) -> bool:
        """Whether some ancestor matches `query` (see `find_ancestors`)."""
        return bool(self.find_ancestors(query, stop_recursing_when))

    def _descendants(
        self, query: SpanQuery | SpanPredicate, stop: SpanQuery | SpanPredicate | None
    ) -> Iterator[SpanNode]:
        test = _test(query)
        halt = None if stop is None else _test(stop)
        stack = list(reversed(self._children))
        while stack:
            current = stack.pop()
            if test(current):
                yield current
            if halt is None or not halt(current):
                stack.extend(reversed(current._children))

    def __repr__(self) -> str:
        return (
            f"SpanNode(name={self.name!r}, span_id={self.span_id:016x}, "
            f"children={len(self._children)})"
        )


SpanPredicate: TypeAlias = Callable[[SpanNode], bool]
"""A function of a span that says whether it matches (in place of a `SpanQuery`)."""


def _every(node: SpanNode) -> bool:
    return True


def _test(query: SpanQuery | SpanPredicate) -> SpanPredicate:
    """`query` as a function of a node; a `SpanQuery` is checked now, once.

    One matcher serves all the nodes it is asked about, so the step limit
    bounds the whole search, not each node.
    """
    if callable(query):
        return query
    compiled: CompiledQuery = compile_query(query)
    matcher = Matcher()
    return lambda node: matcher.matches(node, compiled)


class SpanTree:
    """The finished spans of one case, as a forest: each span under its parent.

    A span whose parent is not among them (the turn's `invoke_agent` span) is
    a root. Iterating gives every span in the order they started.
    """

    def __init__(self, nodes: Iterable[SpanNode] = (), *, dropped: int = 0) -> None:
        """Link `nodes` to each other by their ids; `dropped` counts spans left out.

        The nodes' `parent` and `children` are set anew, so give each node to
        one tree. A span id given twice keeps its first node; a parent id that
        would close a cycle is cut, that node becoming a root.
        """
        ordered: dict[tuple[int, int], SpanNode] = {}
        for node in sorted(nodes, key=lambda one: one.start_timestamp):
            ordered.setdefault((node.trace_id, node.span_id), node)
        for node in ordered.values():
            node.parent = None
            node._children = []
        for node in ordered.values():
            if node.parent_span_id is not None:
                parent = ordered.get((node.trace_id, node.parent_span_id))
                if parent is not None and parent is not node:
                    node.parent = parent
        _cut_cycles(ordered.values())
        for node in ordered.values():
            if node.parent is not None:
                node.parent._children.append(node)
        self._nodes = list(ordered.values())
        self.roots: list[SpanNode] = [node for node in self._nodes if node.parent is None]
        """The spans with no parent in the tree, in the order they started."""
        self.dropped = dropped
        """Spans of the case left out: past the number kept per case (`MAX_CASE_SPANS`)."""

    def __iter__(self) -> Iterator[SpanNode]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def find(self, query: SpanQuery | SpanPredicate) -> list[SpanNode]:
        """Every span that matches `query`, in the order they started.

        Raises:
            SpanQueryError: `query` is no valid `SpanQuery`.
            SpanQueryLimitError: matching visited more than `QUERY_STEP_LIMIT` spans.
        """
        test = _test(query)
        return [node for node in self._nodes if test(node)]

    def first(self, query: SpanQuery | SpanPredicate) -> SpanNode | None:
        """The first span to start that matches `query`, or None (raises as `find`)."""
        test = _test(query)
        return next((node for node in self._nodes if test(node)), None)

    def any(self, query: SpanQuery | SpanPredicate) -> bool:
        """Whether some span matches `query` (raises as `find`)."""
        return self.first(query) is not None

    def __repr__(self) -> str:
        return f"SpanTree(spans={len(self._nodes)}, roots={[root.name for root in self.roots]})"


def _cut_cycles(nodes: Iterable[SpanNode]) -> None:
    """Make a root of any node whose parent chain leads back to itself.

    Spans OpenTelemetry made never form one, but a tree built by hand might,
    and walking up one would never end. Each node is walked once.
    """
    walking, done = 1, 2
    state: dict[int, int] = {}
    for start in nodes:
        path: list[SpanNode] = []
        current: SpanNode | None = start
        while current is not None and id(current) not in state:
            state[id(current)] = walking
            path.append(current)
            parent = current.parent
            if parent is not None and state.get(id(parent)) == walking:
                current.parent = None  # the edge closing the cycle
                parent = None
            current = parent
        for node in path:
            state[id(node)] = done
