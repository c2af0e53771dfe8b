"""`set_eval_attribute` and `increment_eval_metric`: what a task records about its case.

Recorded per case and summed, never mixed between cases that run at once,
nothing outside a case's task, refused when no JSON or number (the case's
task error), seen by evaluators, kept in the report's JSON and its table.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from collections.abc import Callable

import neuron_evals
import neuron_evals.dataset
import pytest
from neuron_evals import (
    Case,
    Dataset,
    EvalRecordError,
    EvaluationReport,
    EvaluatorContext,
    ReportCase,
    increment_eval_metric,
    set_eval_attribute,
)
from neuron_evals import evaluator as as_evaluator
from neuron_evals._strict_json import MAX_JSON_DEPTH
from neuron_evals.task_record import recording

from layer0 import TurnInput, TurnOutput
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._reports import current


async def _run(task: Callable[[str | TurnInput], object], *names: str) -> EvaluationReport:
    """Evaluate `task` (an async function) on a case per name, its inputs the name."""

    async def wrapped(inputs: str | TurnInput) -> object:
        result = task(inputs)
        return await result if asyncio.iscoroutine(result) else result

    wrapped.__name__ = "task"
    return await Dataset([Case(name, name) for name in names]).evaluate(wrapped)


async def test_a_task_records_attributes_and_summed_metrics_on_its_case() -> None:
    async def task(inputs: str | TurnInput) -> str:
        set_eval_attribute("prompt", {"version": 2, "tags": ["short", None, True]})
        set_eval_attribute("model", "m-1")
        increment_eval_metric("retries", 1)
        increment_eval_metric("retries", 2)
        increment_eval_metric("seconds", 0.25)
        increment_eval_metric("seconds", 1)
        return "ok"

    case = (await _run(task, "tea")).case("tea")

    assert case.attributes == {
        "prompt": {"version": 2, "tags": ["short", None, True]},
        "model": "m-1",
    }
    assert case.metrics == {"retries": 3, "seconds": 1.25}
    assert type(case.metrics["retries"]) is int and type(case.metrics["seconds"]) is float
    assert case.passed


async def test_a_later_attribute_replaces_an_earlier_one_of_its_name() -> None:
    async def task(inputs: str | TurnInput) -> str:
        set_eval_attribute("step", "first")
        set_eval_attribute("step", ["second"])
        return "ok"

    assert (await _run(task, "tea")).case("tea").attributes == {"step": ["second"]}


async def test_a_metric_only_ever_incremented_by_zero_is_not_recorded() -> None:
    """As pydantic-evals has it: a metric shows once something counted."""

    async def task(inputs: str | TurnInput) -> str:
        increment_eval_metric("never", 0)
        increment_eval_metric("net", 2)
        increment_eval_metric("net", -2)
        return "ok"

    assert (await _run(task, "tea")).case("tea").metrics == {"net": 0}


async def test_the_value_recorded_is_a_copy_made_at_the_call() -> None:
    async def task(inputs: str | TurnInput) -> str:
        found = {"ids": [1, 2]}
        set_eval_attribute("found", found)
        found["ids"].append(3)
        return "ok"

    assert (await _run(task, "tea")).case("tea").attributes == {"found": {"ids": [1, 2]}}


async def test_cases_running_at_once_each_keep_their_own_records() -> None:
    both_started = asyncio.Barrier(2)

    async def task(inputs: str | TurnInput) -> str:
        own = 1 if inputs == "a" else 10
        set_eval_attribute("case", str(inputs))
        increment_eval_metric("count", own)
        async with asyncio.timeout(10):  # a failure, not a hang, if the cases ran one by one
            await both_started.wait()
        # The other case recorded its own by now: neither sees it.
        set_eval_attribute("after", str(inputs))
        increment_eval_metric("count", own)
        return "ok"

    report = await _run(task, "a", "b")

    assert [case.task_error for case in report.cases] == [None, None]
    assert report.case("a").attributes == {"case": "a", "after": "a"}
    assert report.case("b").attributes == {"case": "b", "after": "b"}
    assert (report.case("a").metrics, report.case("b").metrics) == ({"count": 2}, {"count": 20})


async def test_repeated_runs_of_a_case_each_have_their_own_record() -> None:
    async def task(inputs: str | TurnInput) -> str:
        increment_eval_metric("calls", 1)
        return "ok"

    report = await Dataset([Case("tea", "tea")]).evaluate(task, repeat=3)

    assert [case.metrics for case in report.cases] == [{"calls": 1}] * 3


async def test_asyncio_tasks_and_to_thread_record_into_the_case_a_bare_thread_does_not() -> None:
    def in_thread(name: str) -> None:
        increment_eval_metric(name, 1)

    async def task(inputs: str | TurnInput) -> str:
        await asyncio.gather(*(asyncio.to_thread(in_thread, "to_thread") for _ in range(3)))
        await asyncio.create_task(asyncio.to_thread(in_thread, "child_task"))
        bare = threading.Thread(target=in_thread, args=("bare_thread",))
        copied = threading.Thread(
            target=contextvars.copy_context().run, args=(in_thread, "copied_thread")
        )
        for thread in (bare, copied):
            thread.start()
            thread.join()
        return "ok"

    metrics = (await _run(task, "tea")).case("tea").metrics

    assert metrics == {"to_thread": 3, "child_task": 1, "copied_thread": 1}


def test_outside_a_case_both_do_nothing_and_check_nothing() -> None:
    set_eval_attribute("x", {1, 2})  # no JSON, but no case either: ignored, as pydantic-evals does
    increment_eval_metric("y", float("nan"))
    with recording() as record:
        pass
    set_eval_attribute("x", 1)
    assert (record.attributes(), record.metrics()) == ({}, {})


async def test_an_evaluator_reads_the_record_and_cannot_add_to_it() -> None:
    seen: dict[str, object] = {}

    @as_evaluator
    def per_retry(ctx: EvaluatorContext) -> float:
        seen.update(attributes=dict(ctx.attributes), metrics=dict(ctx.metrics))
        set_eval_attribute("from_evaluator", True)  # the task's record is closed by now
        increment_eval_metric("retries", 100)
        return 1 / (1 + ctx.metrics["retries"])

    async def task(inputs: str | TurnInput) -> str:
        set_eval_attribute("prompt", "v2")
        increment_eval_metric("retries", 3)
        return "ok"

    report = await Dataset([Case("tea", "tea")], evaluators=[per_retry]).evaluate(task)

    case = report.case("tea")
    assert seen == {"attributes": {"prompt": "v2"}, "metrics": {"retries": 3}}
    assert case.scores["per_retry"].value == 0.25
    assert (case.attributes, case.metrics) == ({"prompt": "v2"}, {"retries": 3})


class _Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


def _holding_itself() -> list[object]:
    looped: list[object] = []
    looped.append(looped)
    return looped


@pytest.mark.parametrize(
    ("record", "says"),
    [
        pytest.param(
            lambda: set_eval_attribute("ids", {1, 2}),
            "eval attribute 'ids': the value is {1, 2}, of type set, not JSON",
            id="set",
        ),
        pytest.param(
            lambda: set_eval_attribute("pair", (1, 2)),
            "the value is (1, 2), of type tuple, not JSON",
            id="tuple",
        ),
        pytest.param(
            lambda: set_eval_attribute("deep", {"a": [0, _Opaque()]}),
            "value['a'][1] is <opaque>, of type _Opaque, not JSON",
            id="object-inside",
        ),
        pytest.param(
            lambda: set_eval_attribute("nan", {"x": float("nan")}),
            "value['x'] is nan; JSON has no NaN or infinity",
            id="nan-inside",
        ),
        pytest.param(
            lambda: set_eval_attribute("keys", {1: "one"}),
            "the value has the key 1, of type int; JSON object keys are strings",
            id="int-key",
        ),
        pytest.param(
            lambda: set_eval_attribute("loop", _holding_itself()),
            f"is nested more than {MAX_JSON_DEPTH} deep",
            id="holds-itself",
        ),
        pytest.param(
            lambda: set_eval_attribute(3, "x"),  # type: ignore[arg-type]
            "eval attribute 3: the name 3 is of type int, not str",
            id="attribute-name",
        ),
        pytest.param(
            lambda: increment_eval_metric("n", "1"),  # type: ignore[arg-type]
            "eval metric 'n': the amount '1' is of type str, not int or float",
            id="str-amount",
        ),
        pytest.param(
            lambda: increment_eval_metric("n", True),
            "eval metric 'n': the amount True is of type bool, not int or float",
            id="bool-amount",
        ),
        pytest.param(
            lambda: increment_eval_metric("n", float("inf")),
            "eval metric 'n': the amount inf is not finite",
            id="infinite-amount",
        ),
        pytest.param(
            lambda: increment_eval_metric(None, 1),  # type: ignore[arg-type]
            "eval metric None: the name None is of type NoneType, not str",
            id="metric-name",
        ),
    ],
)
async def test_what_a_report_cannot_hold_is_refused_as_the_case_s_task_error(
    record: Callable[[], None], says: str
) -> None:
    async def task(inputs: str | TurnInput) -> str:
        set_eval_attribute("before", "kept")
        record()
        return "never"

    case = (await _run(task, "tea")).case("tea")

    assert case.task_error is not None
    assert case.task_error.error_type == "EvalRecordError"
    assert says in case.task_error.message
    assert case.attributes == {"before": "kept"}  # what was recorded before the error stays


def test_the_error_names_the_kind_and_name_and_is_a_value_error() -> None:
    with recording(), pytest.raises(EvalRecordError) as caught:
        increment_eval_metric("tokens", 1e308)
        increment_eval_metric("tokens", 1e308)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, neuron_evals.EvalsError)
    assert (caught.value.kind, caught.value.name) == ("metric", "tokens")
    assert "adding 1e+308 to 1e+308 overflows" in str(caught.value)


def test_a_str_subclass_is_recorded_as_a_plain_str() -> None:
    class Tag(str):
        pass

    with recording() as record:
        set_eval_attribute("tag", {Tag("key"): Tag("value")})
    ((key, value),) = record.attributes()["tag"].items()  # type: ignore[union-attr]
    assert (type(key), type(value)) == (str, str)


async def test_tools_of_a_turn_record_into_the_case_sync_ones_in_their_thread_too() -> None:
    @tool
    async def search(query: str) -> str:
        """Search the shop."""
        increment_eval_metric("searches", 1)
        set_eval_attribute("query", query)
        return "tea: 3 euros"

    @tool
    def count(item: str) -> int:
        """Count an item in stock (sync: runs in a thread)."""
        increment_eval_metric("counted", 1)
        return 7

    async def task(inputs: str | TurnInput) -> TurnOutput:
        model = ScriptedProvider(
            [
                tool_call_response(ToolUsePart("c1", "search", {"query": "tea"})),
                tool_call_response(ToolUsePart("c2", "count", {"item": "tea"})),
                tool_call_response(ToolUsePart("c3", "search", {"query": "cake"})),
                text_response("Tea costs 3 euros."),
            ]
        )
        turn = NeuronTurn(
            model,
            tools=ToolRegistry([search, count]),
            config=NeuronTurnConfig(agent="shop", model="m-1"),
        )
        return await turn.execute(TurnInput(message="tea?", trigger="user"))

    case = (await Dataset([Case("tea", "tea")]).evaluate(task)).case("tea")

    assert case.tools_called == ["search", "count", "search"]
    assert (case.metrics, case.attributes) == ({"searches": 2, "counted": 1}, {"query": "cake"})


async def test_a_refused_value_in_a_turn_s_tool_is_that_tool_s_error_not_the_task_s() -> None:
    @tool
    async def lookup() -> str:
        """Look something up, recording what the report cannot hold."""
        set_eval_attribute("found", {1, 2})
        return "never"

    async def task(inputs: str | TurnInput) -> TurnOutput:
        model = ScriptedProvider(
            [tool_call_response(ToolUsePart("c1", "lookup", {})), text_response("done")]
        )
        turn = NeuronTurn(
            model, tools=ToolRegistry([lookup]), config=NeuronTurnConfig(agent="a", model="m")
        )
        return await turn.execute(TurnInput(message="go", trigger="user"))

    case = (await Dataset([Case("x", "x")]).evaluate(task)).case("x")

    assert case.task_error is None and case.output_text == "done"
    assert case.attributes == {}


def test_the_functions_are_where_pydantic_evals_has_them_too() -> None:
    assert neuron_evals.dataset.set_eval_attribute is set_eval_attribute
    assert neuron_evals.dataset.increment_eval_metric is increment_eval_metric
    assert {"set_eval_attribute", "increment_eval_metric", "EvalRecordError"} <= set(
        neuron_evals.__all__
    )


async def test_attributes_and_metrics_round_trip_through_the_report_s_json() -> None:
    async def task(inputs: str | TurnInput) -> str:
        if inputs == "tea":
            set_eval_attribute("prompt", {"version": 2})
            increment_eval_metric("retries", 2)
            increment_eval_metric("seconds", 0.5)
        return "ok"

    report = await _run(task, "tea", "cake")
    text = report.to_json()

    tea, cake = json.loads(text)["cases"]
    assert (tea["attributes"], tea["metrics"]) == (
        {"prompt": {"version": 2}},
        {"retries": 2, "seconds": 0.5},
    )
    assert "attributes" not in cake and "metrics" not in cake  # as the JSON always was
    again = EvaluationReport.from_json(text)
    assert again == report
    assert type(again.case("tea").metrics["retries"]) is int


def test_a_report_stored_before_attributes_metrics_and_stack_traces_loads() -> None:
    old = {
        "name": "before",
        "cases": [
            {
                "name": "tea",
                "inputs": "tea",
                "duration": 0.1,
                "task_error": {"error_type": "ValueError", "message": "no"},
                "evaluator_failures": [
                    {"name": "x", "source": "x", "error_type": "KeyError", "message": "'k'"}
                ],
            }
        ],
        "summary": {"cases": 1},
    }

    report = EvaluationReport.from_json(json.dumps(old))

    case = report.case("tea")
    assert (case.attributes, case.metrics) == ({}, {})
    assert case.task_error is not None and case.task_error.stacktrace is None
    assert case.evaluator_failures[0].stacktrace is None
    assert report.summary().mean_metrics == {}


@pytest.mark.parametrize(
    "metrics", [{"n": True}, {"n": float("nan")}, {"n": "3"}], ids=["bool", "nan", "str"]
)
def test_a_report_case_refuses_a_metric_that_is_no_finite_number(
    metrics: dict[str, object],
) -> None:
    with pytest.raises(ValueError, match=r"metrics\.n"):
        ReportCase.model_validate({"name": "a", "inputs": "a", "duration": 0.1, "metrics": metrics})


def _with_records() -> EvaluationReport:
    capital, story, broken = current().cases
    return current().model_copy(
        update={
            "cases": [
                capital.model_copy(
                    update={"metrics": {"retries": 1, "ms": 12.5}, "attributes": {"prompt": "v2"}}
                ),
                story.model_copy(update={"metrics": {"retries": 4}}),
                broken,
            ]
        }
    )


def test_the_table_shows_metrics_and_attributes_and_the_totals_their_means() -> None:
    lines = _with_records().render(width=30).splitlines()

    header = lines[2].split()
    assert header[:6] == ["Case", "Result", "Assertions", "Scores", "Labels", "Metrics"]
    assert header[6] == "Attributes"
    capital = next(line for line in lines if line.startswith("capital"))
    story = next(line for line in lines if line.startswith("story"))
    assert "retries=1, ms=12.5" in capital and "prompt=v2" in capital
    assert "retries=4" in story
    assert "Mean metrics: retries=2.5, ms=12.5" in lines
    summary = _with_records().summary()
    assert summary.mean_metrics == {"retries": 2.5, "ms": 12.5}


def test_columns_of_metrics_and_attributes_are_left_out_when_no_case_has_any() -> None:
    text = current().render()
    assert "Metrics" not in text and "Attributes" not in text and "Mean metrics" not in text


def test_a_non_string_attribute_is_shown_as_compact_json() -> None:
    case = current().cases[0].model_copy(update={"attributes": {"ids": [1, 2], "ok": True}})
    text = EvaluationReport(name="r", cases=[case]).render(width=60)
    assert "ids=[1, 2], ok=true" in text


def test_against_a_baseline_each_metric_shows_its_change() -> None:
    before = _with_records()
    capital = before.cases[0]
    after = before.model_copy(
        update={"cases": [capital.model_copy(update={"metrics": {"retries": 3, "ms": 12.5}})]}
    )

    lines = after.render(baseline=before, width=60).splitlines()

    row = next(line for line in lines if line.startswith("capital"))
    assert "retries=1 -> 3 (+2), ms=12.5" in row
    assert "Mean metrics: retries=2.5 -> 3 (+0.5), ms=12.5" in lines


def test_compare_lists_each_metric_before_and_now() -> None:
    before = _with_records()
    capital, story, broken = before.cases
    after = before.model_copy(
        update={"cases": [capital.model_copy(update={"metrics": {"retries": 3}}), story, broken]}
    )

    comparison = after.compare(before)

    changes = {change.name: change.metrics for change in comparison.cases}
    assert changes["capital"] == {"retries": (1, 3), "ms": (12.5, None)}
    assert changes["story"] == {"retries": (4, 4)} and changes["broken"] == {}


async def test_runs_of_a_repeated_case_show_the_mean_of_their_metrics() -> None:
    calls = iter([1, 2, 6])

    async def task(inputs: str | TurnInput) -> str:
        increment_eval_metric("retries", next(calls))
        return "ok"

    report = await Dataset([Case("tea", "tea")]).evaluate(task, repeat=3)

    assert "mean metrics retries=3" in report.render()
    assert report.case_summaries()["tea"].mean_metrics == {"retries": 3.0}
