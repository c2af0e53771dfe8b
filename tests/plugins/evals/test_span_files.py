"""`HasMatchingSpan` in dataset files: its query read, checked, written and run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from neuron_evals import Case, Dataset, DatasetFileError, HasMatchingSpan, SpanQueryError
from neuron_tracing_otel import instrument, uninstrument
from opentelemetry.sdk.trace import TracerProvider

from ._schema_check import schema_errors
from ._turns import adding

SHOP = """\
name: tools
cases:
- name: adds
  inputs: What is 2 + 3?
  evaluators:
  - HasMatchingSpan:
      query:
        name_equals: execute_tool add
        has_attributes: {gen_ai.tool.name: add, gen_ai.tool.call.id: c1}
        some_ancestor_has: {name_matches_regex: "invoke_agent "}
      evaluation_name: added
evaluators:
- HasMatchingSpan:
    query:
      name_contains: invoke_agent
      max_duration: 60
      min_child_count: 3
      all_children_have:
        or_:
        - {name_matches_regex: "chat( |$)"}
        - {has_attribute_keys: [gen_ai.tool.name]}
- HasMatchingSpan:
    query: {name_contains: execute_tool, not_: {name_equals: execute_tool add}}
    evaluation_name: another tool
"""


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """neuron-tracing-otel instrumenting, into a provider that exports nowhere."""
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    instrument(tracer_provider=TracerProvider())
    yield
    uninstrument()


def test_a_span_query_in_a_yaml_file_reads_and_runs(tmp_path: Path, traced: None) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text(SHOP, encoding="utf-8")

    dataset = Dataset.from_file(path)
    report = dataset.evaluate_sync(adding())

    case = report.case("adds")
    assert case.evaluator_failures == []
    assert {name: result.value for name, result in case.assertions.items()} == {
        "HasMatchingSpan": True,
        "added": True,
        "another tool": False,
    }


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_span_query_is_written_whole_and_reads_back_the_same(tmp_path: Path, suffix: str) -> None:
    query = {
        "name_equals": "execute_tool add",
        "max_duration": timedelta(seconds=2),
        "and_": [{"has_attributes": {"gen_ai.response.finish_reasons": ["stop"]}}],
        "some_ancestor_has": {"min_child_count": 1, "stop_recursing_when": {"max_depth": 0}},
    }
    written = Dataset(
        [Case("a", "hi", evaluators=[HasMatchingSpan(query, evaluation_name="q")])],  # type: ignore[arg-type]
        evaluators=[HasMatchingSpan({"name_contains": "chat"})],
    )
    path = tmp_path / f"spans{suffix}"

    written.to_file(path)

    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if suffix == ".json" else yaml.safe_load(text)
    assert data["evaluators"] == [{"HasMatchingSpan": {"query": {"name_contains": "chat"}}}]
    assert data["cases"][0]["evaluators"][0]["HasMatchingSpan"]["query"]["max_duration"] == "PT2S"
    read = Dataset.from_file(path)
    assert read.evaluators == written.evaluators
    assert read.cases[0].evaluators == written.cases[0].evaluators


@pytest.mark.parametrize(
    ("spec", "valid"),
    [
        ("{HasMatchingSpan: {query: {name_equals: execute_tool add}}}", True),
        ("{HasMatchingSpan: {query: {}, evaluation_name: any span}}", True),
        ("{HasMatchingSpan: {query: {max_duration: 1.5, min_duration: PT0.5S}}}", True),
        ("{HasMatchingSpan: {query: {some_child_has: {or_: [{name_contains: a}]}}}}", True),
        ("{HasMatchingSpan: {query: {has_attributes: {n: [1, 2]}, min_depth: 1}}}", True),
        ("HasMatchingSpan", False),  # the query is required
        ("{HasMatchingSpan: {name_equals: x}}", False),  # a mapping is the arguments
        ("{HasMatchingSpan: execute_tool add}", False),
        ("{HasMatchingSpan: {query: {name_equal: x}}}", False),
        ("{HasMatchingSpan: {query: {not_: {min_child_count: many}}}}", False),
        ("{HasMatchingSpan: {query: {and_: {name_equals: x}}}}", False),
        ("{HasMatchingSpan: {query: {has_attribute_keys: key}}}", False),
    ],
)
def test_the_schema_accepts_a_span_query_exactly_when_from_file_does(
    tmp_path: Path, spec: str, valid: bool
) -> None:
    text = f"cases:\n- name: a\n  inputs: hi\n  evaluators: [{spec}]\n"
    path = tmp_path / "d.yaml"
    path.write_text(text, encoding="utf-8")
    assert (schema_errors(yaml.safe_load(text)) == []) is valid
    try:
        Dataset.from_file(path)
    except DatasetFileError:
        assert not valid
    else:
        assert valid


@pytest.mark.parametrize(
    ("query", "says"),
    [
        (
            "{name_matches_regex: 'execute_tool (add'}",
            "span query at name_matches_regex: 'execute_tool (add' is not a regular expression",
        ),
        (
            "{not_: {or_: [{name_contains: a}], name_contains: b}}",
            "span query at not_: or_ cannot stand beside other conditions (name_contains)",
        ),
        ("{or_: []}", "span query at or_: needs at least one query"),
        (
            "{some_child_has: {name_equal: x}}",
            "argument 'query' at some_child_has.name_equal: Extra inputs are not permitted",
        ),
        ("{and_: [" * 40 + "{}" + "]}" * 40, "nested more than 32 queries deep"),
    ],
)
def test_a_query_that_cannot_match_is_refused_when_the_file_is_read(
    tmp_path: Path, query: str, says: str
) -> None:
    path = tmp_path / "d.yaml"
    spec = f"{{HasMatchingSpan: {{query: {query}}}}}"
    path.write_text(f"cases:\n- name: a\n  inputs: hi\n  evaluators: [{spec}]\n", "utf-8")
    with pytest.raises(DatasetFileError) as refused:
        Dataset.from_file(path)
    assert refused.value.case == "a" and refused.value.field == "evaluators[0]"
    assert says in str(refused.value)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_file_nested_past_what_a_parser_can_read_is_refused_not_a_crash(
    tmp_path: Path, suffix: str
) -> None:
    query = '{"not_": ' * 5_000 + "{}" + "}" * 5_000
    path = tmp_path / f"deep{suffix}"
    path.write_text(
        '{"cases": [{"name": "a", "inputs": "hi", "evaluators": '
        f'[{{"HasMatchingSpan": {{"query": {query}}}}}]}}]}}',
        encoding="utf-8",
    )
    with pytest.raises(DatasetFileError, match="nested too deeply to read"):
        Dataset.from_file(path)


def test_a_bad_query_given_in_python_is_refused_when_made() -> None:
    with pytest.raises(SpanQueryError, match=r"at name_matches_regex: '\*' is not a regular"):
        HasMatchingSpan({"name_matches_regex": "*"})
