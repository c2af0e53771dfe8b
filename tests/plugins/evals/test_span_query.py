"""`SpanTree`, `SpanNode` and every condition of a `SpanQuery`, on trees built from nodes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from neuron_evals import (
    MAX_QUERY_DEPTH,
    SpanNode,
    SpanQuery,
    SpanQueryError,
    SpanQueryLimitError,
    SpanTree,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _node(
    name: str,
    span_id: int,
    parent: int | None,
    start: float,
    end: float,
    **attributes: Any,
) -> SpanNode:
    return SpanNode(
        name=name,
        trace_id=7,
        span_id=span_id,
        parent_span_id=parent,
        start_timestamp=T0 + timedelta(seconds=start),
        end_timestamp=T0 + timedelta(seconds=end),
        attributes=attributes,
    )


def _turn() -> SpanTree:
    """A turn as neuron-tracing-otel records it, plus an HTTP call under the tool.

    invoke_agent shop (0-10s)
      chat m-1 (0-2s)            finish_reasons ("tool_call",)
      execute_tool price (2-3s)  tool name price, ok true
        GET /prices (2.1-2.5s)
      chat m-1 (3-4s)            finish_reasons ("stop",)
    """
    nodes = [
        _node("chat m-1", 2, 1, 0.001, 2, **{"gen_ai.response.finish_reasons": ("tool_call",)}),
        _node("GET /prices", 4, 3, 2.1, 2.5, **{"http.status": 200}),
        _node("invoke_agent shop", 1, None, 0, 10, **{"gen_ai.operation.name": "invoke_agent"}),
        _node(
            "execute_tool price",
            3,
            1,
            2,
            3,
            **{"gen_ai.tool.name": "price", "gen_ai.operation.name": "execute_tool", "ok": True},
        ),
        _node("chat m-1", 5, 1, 3, 4, **{"gen_ai.response.finish_reasons": ("stop",)}),
    ]
    return SpanTree(nodes)


def _found(query: SpanQuery) -> list[str]:
    """The span ids matching `query`, as `name#id`."""
    return [f"{node.name}#{node.span_id}" for node in _turn().find(query)]


AGENT, CHAT1, TOOL, HTTP, CHAT2 = (
    "invoke_agent shop#1",
    "chat m-1#2",
    "execute_tool price#3",
    "GET /prices#4",
    "chat m-1#5",
)


def test_a_tree_links_spans_by_their_ids_in_the_order_they_started() -> None:
    tree = _turn()
    assert [root.name for root in tree.roots] == ["invoke_agent shop"]
    assert [f"{n.name}#{n.span_id}" for n in tree] == [AGENT, CHAT1, TOOL, HTTP, CHAT2]
    agent = tree.roots[0]
    assert [child.span_id for child in agent.children] == [2, 3, 5]
    assert [node.span_id for node in agent.descendants] == [2, 3, 4, 5]
    http = tree.first({"name_equals": "GET /prices"})
    assert http is not None and http.parent is not None and http.parent.span_id == 3
    assert [node.span_id for node in http.ancestors] == [3, 1]
    assert http.duration == timedelta(seconds=0.4)
    assert len(tree) == 5 and tree.dropped == 0


def test_a_span_whose_parent_is_not_in_the_tree_is_a_root() -> None:
    tree = SpanTree([_node("orphan", 9, 1234, 0, 1), _node("alone", 8, None, 1, 2)])
    assert [root.name for root in tree.roots] == ["orphan", "alone"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, [AGENT, CHAT1, TOOL, HTTP, CHAT2]),
        ({"name_equals": "chat m-1"}, [CHAT1, CHAT2]),
        ({"name_equals": "chat"}, []),
        ({"name_contains": "tool"}, [TOOL]),
        ({"name_matches_regex": r"chat m-\d"}, [CHAT1, CHAT2]),
        ({"name_matches_regex": "m-1"}, []),  # re.match: anchored at the start
        ({"has_attributes": {"gen_ai.tool.name": "price"}}, [TOOL]),
        ({"has_attributes": {"gen_ai.tool.name": "cost"}}, []),
        ({"has_attributes": {"gen_ai.response.finish_reasons": ["stop"]}}, [CHAT2]),
        ({"has_attributes": {"ok": True}}, [TOOL]),
        ({"has_attributes": {"ok": 1}}, []),  # a bool is not a number
        ({"has_attributes": {"http.status": 200}}, [HTTP]),
        ({"has_attributes": {"http.status": True}}, []),
        ({"has_attribute_keys": ["gen_ai.operation.name"]}, [AGENT, TOOL]),
        ({"has_attribute_keys": ["gen_ai.operation.name", "ok"]}, [TOOL]),
        ({"min_duration": 2}, [AGENT]),
        ({"min_duration": timedelta(seconds=1)}, [AGENT, CHAT1, TOOL, CHAT2]),
        ({"max_duration": 0.5}, [HTTP]),
        ({"max_duration": timedelta(seconds=1)}, [TOOL, HTTP, CHAT2]),
        ({"not_": {"name_contains": "chat"}}, [AGENT, TOOL, HTTP]),
        ({"and_": [{"name_contains": "chat"}, {"max_duration": 1}]}, [CHAT2]),
        ({"or_": [{"name_contains": "GET"}, {"name_contains": "invoke"}]}, [AGENT, HTTP]),
        ({"min_child_count": 1}, [AGENT, TOOL]),
        ({"max_child_count": 0}, [CHAT1, HTTP, CHAT2]),
        ({"min_child_count": 2, "max_child_count": 3}, [AGENT]),
        ({"some_child_has": {"name_contains": "GET"}}, [TOOL]),
        ({"all_children_have": {"max_duration": 2}}, [AGENT, CHAT1, TOOL, HTTP, CHAT2]),
        ({"all_children_have": {"name_contains": "chat"}, "min_child_count": 1}, []),
        ({"no_child_has": {"name_contains": "tool"}}, [CHAT1, TOOL, HTTP, CHAT2]),
        ({"min_descendant_count": 4}, [AGENT]),
        ({"max_descendant_count": 1, "min_descendant_count": 1}, [TOOL]),
        ({"some_descendant_has": {"name_contains": "GET"}}, [AGENT, TOOL]),
        ({"all_descendants_have": {"name_contains": "GET"}, "min_child_count": 1}, [TOOL]),
        ({"no_descendant_has": {"name_contains": "GET"}}, [CHAT1, HTTP, CHAT2]),
        (
            # The tool span stops the search below the agent: its HTTP call is out of reach.
            {
                "some_descendant_has": {"name_contains": "GET"},
                "stop_recursing_when": {"name_contains": "execute_tool"},
            },
            [TOOL],
        ),
        (
            {
                "some_descendant_has": {"name_contains": "execute_tool"},
                "stop_recursing_when": {"name_contains": "execute_tool"},
            },
            [AGENT],  # the span that stops the search is itself looked at
        ),
        ({"min_depth": 2}, [HTTP]),
        ({"max_depth": 0}, [AGENT]),
        ({"min_depth": 1, "max_depth": 1}, [CHAT1, TOOL, CHAT2]),
        ({"some_ancestor_has": {"name_contains": "execute_tool"}}, [HTTP]),
        ({"all_ancestors_have": {"min_child_count": 3}, "min_depth": 1}, [CHAT1, TOOL, CHAT2]),
        ({"no_ancestor_has": {"name_contains": "execute_tool"}}, [AGENT, CHAT1, TOOL, CHAT2]),
        (
            {
                "some_ancestor_has": {"name_contains": "invoke_agent"},
                "stop_recursing_when": {"name_contains": "execute_tool"},
            },
            [CHAT1, TOOL, CHAT2],
        ),
    ],
)
def test_each_query_condition_selects_the_spans_it_names(
    query: SpanQuery, expected: list[str]
) -> None:
    assert _found(query) == expected


def test_a_function_of_a_node_is_a_query_too() -> None:
    tree = _turn()
    assert [n.span_id for n in tree.find(lambda node: node.duration.total_seconds() > 3)] == [1]
    agent = tree.roots[0]
    assert agent.any_child(lambda node: node.name.startswith("execute_tool"))
    assert [n.span_id for n in agent.find_children({"name_contains": "chat"})] == [2, 5]
    assert [n.span_id for n in agent.find_descendants({"max_duration": 0.5})] == [4]
    assert agent.any_descendant({"name_contains": "GET"})
    assert not agent.any_descendant(
        {"name_contains": "GET"}, stop_recursing_when={"name_contains": "execute_tool"}
    )
    http = tree.first({"name_contains": "GET"})
    assert http is not None and http.matches({"min_depth": 2})
    assert [n.span_id for n in http.find_ancestors({})] == [3, 1]
    assert http.any_ancestor({"name_contains": "invoke"})
    assert not http.any_ancestor(
        {"name_contains": "invoke"}, stop_recursing_when={"name_contains": "execute_tool"}
    )


def test_a_deep_tree_is_walked_without_recursion() -> None:
    depth = 5_000  # far past Python's recursion limit
    chain = [_node(f"s{i}", i + 1, i or None, i / 1e6, 1) for i in range(depth)]
    tree = SpanTree(chain)
    assert len(tree.roots) == 1
    assert len(tree.roots[0].descendants) == depth - 1
    assert len(chain[-1].ancestors) == depth - 1
    assert [node.name for node in tree.find({"min_depth": depth - 1})] == [f"s{depth - 1}"]
    assert tree.any({"min_descendant_count": depth - 1})


def test_a_query_too_costly_for_the_tree_stops_with_an_error_not_a_hang() -> None:
    chain = [_node(f"s{i}", i + 1, i or None, i / 1e6, 1) for i in range(3_000)]
    tree = SpanTree(chain)
    # Every span asks about every ancestor of every descendant: millions of steps.
    costly: SpanQuery = {"some_descendant_has": {"some_ancestor_has": {"name_equals": "none"}}}
    with pytest.raises(SpanQueryLimitError, match="took more than 1000000 steps"):
        tree.any(costly)


def test_parent_ids_that_form_a_cycle_are_cut_to_a_root() -> None:
    looped = [_node("a", 1, 3, 0, 1), _node("b", 2, 1, 1, 2), _node("c", 3, 2, 2, 3)]
    tree = SpanTree(looped)
    assert len(tree.roots) == 1
    assert all(len(node.ancestors) <= 2 for node in tree)
    assert len(tree.roots[0].descendants) == 2
    itself = SpanTree([_node("self", 1, 1, 0, 1)])
    assert [root.name for root in itself.roots] == ["self"]


def _nested(depth: int) -> dict[str, Any]:
    """A query `depth` queries deep: `and_` around `and_`... around `name_equals: chat m-1`."""
    query: dict[str, Any] = {"name_equals": "chat m-1"}
    for _ in range(depth - 1):
        query = {"and_": [query]}
    return query


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"name_matches_regex": "chat("}, r"at name_matches_regex: 'chat\(' is not a regular"),
        (
            {"some_child_has": {"or_": [{}, {"name_matches_regex": "[a-"}]}},
            r"at some_child_has\.or_\[1\]\.name_matches_regex: '\[a-' is not a regular",
        ),
        ({"name_equal": "x"}, "at name_equal: Extra inputs are not permitted"),
        ({"min_child_count": "many"}, "at min_child_count: Input should be a valid integer"),
        ({"or_": [{}], "name_equals": "x"}, "or_ cannot stand beside other conditions"),
        ({"and_": []}, "at and_: needs at least one query"),
        ({"or_": []}, "at or_: needs at least one query"),
        (_nested(MAX_QUERY_DEPTH + 1), f"nested more than {MAX_QUERY_DEPTH} queries deep"),
        (_nested(100_000), f"nested more than {MAX_QUERY_DEPTH} queries deep"),
        ("execute_tool", "Input should be a valid dictionary"),
    ],
)
def test_a_query_that_cannot_match_is_refused_naming_where(query: Any, message: str) -> None:
    with pytest.raises(SpanQueryError, match=message):
        _turn().find(query)


def test_a_query_that_contains_itself_is_refused() -> None:
    looped: dict[str, Any] = {}
    looped["not_"] = looped
    with pytest.raises(SpanQueryError, match="nested more than"):
        _turn().any(looped)  # type: ignore[arg-type]


def test_a_query_nested_to_the_limit_still_matches() -> None:
    assert _found(_nested(MAX_QUERY_DEPTH)) == [CHAT1, CHAT2]  # type: ignore[arg-type]
