"""A span query's regex that would backtrack for hours on a model-written name is refused."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from neuron_evals import Dataset, DatasetFileError, SpanNode, SpanQueryError, SpanTree

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _tree(*names: str) -> SpanTree:
    return SpanTree(
        SpanNode(
            name=name,
            trace_id=1,
            span_id=n + 1,
            parent_span_id=None,
            start_timestamp=T0,
            end_timestamp=T0,
            attributes={},
        )
        for n, name in enumerate(names)
    )


@pytest.mark.parametrize(
    "pattern",
    [r"(a+)+$", r"execute_tool (\w+_?)+$", r"(?:x|y+)+z", r"((ab)*)+c", r"(?=(a+)+)b", r"(.*)*!"],
)
def test_a_repeated_repetition_is_refused_before_it_meets_a_name(pattern: str) -> None:
    hostile = _tree("execute_tool " + "a" * 40 + "!")  # hours for re on the first pattern
    with pytest.raises(SpanQueryError, match=r"at name_matches_regex: .* repeats a repetition"):
        hostile.find({"name_matches_regex": pattern})


@pytest.mark.parametrize(
    ("pattern", "matched"),
    [
        (r"execute_tool [a-z]+(-[a-z]+)*$", ["execute_tool get-page"]),
        (r"(\d+\.)*\d+", ["1.2.3"]),
        (r"(chat|execute_tool )+", ["chat m-1", "execute_tool get-page"]),
        (r"(a++)+$|(?>x+)+$|1", ["1.2.3"]),
        (r"(ab){2,5}", []),
    ],
)
def test_repetitions_that_cannot_backtrack_long_still_match(
    pattern: str, matched: list[str]
) -> None:
    tree = _tree("chat m-1", "execute_tool get-page", "1.2.3")
    assert [node.name for node in tree.find({"name_matches_regex": pattern})] == matched


def test_a_dataset_file_with_such_a_regex_is_refused_naming_where(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    spec = "{HasMatchingSpan: {query: {some_child_has: {name_matches_regex: '(a+)+$'}}}}"
    path.write_text(f"cases:\n- name: a\n  inputs: hi\n  evaluators: [{spec}]\n", "utf-8")
    with pytest.raises(DatasetFileError) as refused:
        Dataset.from_file(path)
    assert refused.value.case == "a" and refused.value.field == "evaluators[0]"
    assert "at some_child_has.name_matches_regex: '(a+)+$' repeats a repetition" in str(
        refused.value
    )
