"""`EvaluationReport`: the plain-text table (exact), JSON that round-trips with costs as
decimal strings, and the comparison with a baseline."""

from __future__ import annotations

import json

import pytest
from neuron_evals import Case, Dataset, EqualsExpected, EvaluationReport, MaxCost
from pydantic import ValidationError

from layer0 import usd

from ._reports import baseline, current
from ._turns import answering

RENDERED = """\
Evaluation: after

Case     Result  Assertions  Scores               Labels     Exit       Cost     Tokens   Duration  Output
-------  ------  ----------  -------------------  ---------  ---------  -------  -------  --------  ------------------------------
capital  pass    1/1         LLMJudge_score=0.90  -          complete   $0.0012  120/30   520ms     Paris
story    FAIL    0/2         LLMJudge_score=0.40  tone=calm  max_turns  $0.003   400/200  1.50s     Once upon a time there was a …
broken   ERROR   -           -                    -          -          -        -        4ms       ValueError: the task broke

Failures:
  story: ExitReasonIs failed: it ended max_turns
  story: Contains raised KeyError: 'x'
  broken: the task raised ValueError: the task broke

Cases passed: 1/3 (33.3%); assertions passed: 1/3 (33.3%)
Task errors: 1
Mean scores: LLMJudge_score=0.65
Cost: $0.0042 (evaluators: $0.0002)
Tokens: 520 in, 230 out
Duration: 2.02s in all, 675ms a case
"""  # noqa: E501 - the table is as wide as it is


def test_a_report_renders_as_this_exact_table() -> None:
    assert current().render(width=30) == RENDERED


def test_columns_no_case_fills_are_left_out() -> None:
    report = EvaluationReport(name="plain", cases=[current().cases[2]])
    header = report.render().splitlines()[2]
    assert header.split() == ["Case", "Result", "Assertions", "Duration", "Output"]


def test_an_empty_report_says_so() -> None:
    text = EvaluationReport(name="none", cases=[]).render()
    assert "(no cases)" in text
    assert "Cases passed: 0/0" in text


def test_rendering_against_a_baseline_shows_each_change() -> None:
    lines = current().render(baseline=baseline(), width=40).splitlines()
    assert lines[0] == "Evaluation: after (against before)"
    capital = next(line for line in lines if line.startswith("capital"))
    for change in (
        "FAIL -> pass",
        "0/1 -> 1/1",
        "LLMJudge_score=0.50 -> 0.90 (+0.40)",
        "$0.001 -> $0.0012 (+$0.0002)",
        "800ms -> 520ms (-280ms)",
    ):
        assert change in capital
    story = next(line for line in lines if line.startswith("story"))
    assert "pass -> FAIL" in story and "complete -> max_turns" in story
    assert "new: ERROR" in next(line for line in lines if line.startswith("broken"))
    assert "Removed: gone" in lines
    assert "Cases passed: 1/3 (33.3%), was 2/3 (66.7%); assertions passed: 1/3 (33.3%)" in lines
    assert "Mean scores: LLMJudge_score=0.45 -> 0.65 (+0.20)" in lines


def test_compare_lists_changes_regressions_fixes_added_and_removed() -> None:
    comparison = current().compare(baseline())
    assert [change.name for change in comparison.cases] == ["capital", "story"]
    assert comparison.added == ["broken"] and comparison.removed == ["gone"]
    capital, _ = comparison.cases
    assert capital.fixed and not capital.regressed
    assert capital.assertions == {"EqualsExpected": (False, True)}
    assert capital.scores == {"LLMJudge_score": (0.5, 0.9)}
    assert capital.cost == (usd("0.0010"), usd("0.0012"))
    assert capital.duration == (0.8, 0.52)
    assert [change.name for change in comparison.regressions] == ["story"]
    assert [change.name for change in comparison.fixes] == ["capital"]


def test_summary_totals_and_averages() -> None:
    summary = current().summary()
    assert (summary.cases, summary.passed, summary.errors) == (3, 1, 1)
    assert summary.pass_rate == pytest.approx(1 / 3)
    assert (summary.assertions_passed, summary.assertions_total) == (1, 3)
    assert summary.mean_scores == {"LLMJudge_score": pytest.approx(0.65)}
    assert summary.total_cost == usd("0.0042")
    assert summary.evaluator_cost == usd("0.0002")
    assert summary.total_duration == pytest.approx(2.024)


def test_to_json_round_trips_and_writes_costs_as_decimal_strings() -> None:
    report = current()
    text = report.to_json()
    data = json.loads(text)
    assert data["cases"][0]["cost"] == "0.0012"
    assert data["cases"][0]["evaluator_cost"] == "0.0002"
    assert data["summary"]["total_cost"] == "0.0042"
    assert data["summary"]["passed"] == 1
    again = EvaluationReport.from_json(text)
    assert again == report
    assert again.render(width=30) == RENDERED


async def test_a_run_s_report_round_trips_through_json() -> None:
    report = await Dataset(
        [Case("one", "hi", "HI"), Case("two", "yo", "no")],
        evaluators=[EqualsExpected(), MaxCost("0.01")],
    ).evaluate(answering(str.upper, cost="0.00125"))
    text = report.to_json()
    assert '"cost": "0.00125"' in text
    assert EvaluationReport.from_json(text) == report


def test_from_json_refuses_what_is_not_a_report() -> None:
    with pytest.raises(ValidationError):
        EvaluationReport.from_json('{"name": "x", "cases": [{"name": "a"}]}')
