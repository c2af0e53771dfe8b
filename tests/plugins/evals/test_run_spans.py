"""An evaluation run's own spans: `evaluate {name}`, and `case: {case_name}` per case.

Under neuron-tracing-otel's real instrumentation, with the OpenTelemetry SDK
and an in-memory exporter; the tasks are real `NeuronTurn`s over scripted
models.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
from neuron_evals import (
    Case,
    Contains,
    Dataset,
    EqualsExpected,
    EvaluatorContext,
    LLMJudge,
    PassRate,
    SpanTree,
    evaluator,
    increment_eval_metric,
    set_eval_attribute,
)
from neuron_evals._run_spans import RunSpans
from neuron_evals._run_tracing import run_spans
from neuron_evals._span_attributes import MAX_ATTRIBUTE_CHARS
from neuron_tracing_otel import instrument, uninstrument
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from layer0 import TurnInput, TurnOutput, usd
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    ToolUsePart,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

ROOT = Path(__file__).resolve().parents[3]
SECRET = "sk-test-never-on-a-span-7f3a"


@pytest.fixture(autouse=True)
def _a_key_in_the_environment(monkeypatch: pytest.MonkeyPatch, tracing_off: None) -> None:
    """Each test turns tracing on itself (`tracing_off`), with a key in the environment."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    """Where the test's spans end up, once neuron-tracing-otel writes to its provider."""
    found = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(found))
    instrument(tracer_provider=provider, capture_content=False)
    return found


@tool
async def price(item: str) -> int:
    """The price of an item, in euros."""
    return {"tea": 3, "cake": 4}[item]


async def priced(inputs: str | TurnInput) -> TurnOutput:
    """The task: a fresh turn per case whose model looks the price up, then answers."""
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("call_1", "price", {"item": str(inputs)})),
            text_response(f"{inputs} costs {3 if inputs == 'tea' else 4} euros."),
        ]
    )
    turn = NeuronTurn(
        model, tools=ToolRegistry([price]), config=NeuronTurnConfig(agent="shop", model="m-1")
    )
    return await turn.execute(TurnInput(message=f"How much is {inputs}?", trigger="user"))


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    """The spans called `name`, in the order they ended."""
    return [span for span in spans if span.name == name]


def only(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    """The one span called `name`."""
    (span,) = named(spans, name)
    return span


def parent_id(span: ReadableSpan) -> int | None:
    """The span id of the parent of `span`, None for a root."""
    return None if span.parent is None else span.parent.span_id


def span_id(span: ReadableSpan) -> int:
    """The span id of `span`."""
    assert span.context is not None
    return span.context.span_id


def attributes(span: ReadableSpan) -> dict[str, object]:
    """The attributes of `span` as a plain mapping."""
    return dict(span.attributes or {})


@evaluator
def words(ctx: EvaluatorContext) -> dict[str, float | str]:
    """A score and a label, so the case span carries both."""
    count = len(ctx.output_text.split())
    return {"words": float(count), "size": "short" if count < 5 else "long"}


async def test_a_run_is_an_evaluate_span_over_a_case_span_per_case_with_its_attributes(
    exporter: InMemorySpanExporter,
) -> None:
    dataset = Dataset(
        [
            Case("tea", "tea", expected_output="tea costs 3 euros.", metadata={"shelf": 1}),
            Case("cake", "cake", evaluators=[Contains("5 euros")]),
        ],
        evaluators=[EqualsExpected(), words],
        name="shop",
        report_evaluators=[PassRate()],
    )

    report = await dataset.evaluate(priced, name="nightly")

    spans = exporter.get_finished_spans()
    run = only(spans, "evaluate nightly")
    assert run.parent is None
    assert attributes(run) == {
        "name": "nightly",
        "task_name": "priced",
        "dataset_name": "shop",
        "n_cases": 2,
        "repeat": 1,
        "gen_ai.operation.name": "experiment",
        "pass_rate": 0.5,
        "assertion_pass_rate": 0.5,
        "analyses": json.dumps(
            {"PassRate": {"name": "PassRate", "value": 0.5, "reason": None, "source": "PassRate"}},
            separators=(",", ":"),
        ),
    }
    tea, cake = only(spans, "case: tea"), only(spans, "case: cake")
    assert parent_id(tea) == parent_id(cake) == span_id(run)
    seen = attributes(tea)
    assert seen["case_name"] == "tea" and seen["task_name"] == "priced"
    assert seen["inputs"] == "tea" and seen["output"] == "tea costs 3 euros."
    assert json.loads(str(seen["metadata"])) == {"shelf": 1}
    assert seen["expected_output"] == "tea costs 3 euros."
    assert seen["task_duration"] == report.case("tea").duration
    assert json.loads(str(seen["assertions"])) == {
        "EqualsExpected": {
            "name": "EqualsExpected",
            "value": True,
            "reason": None,
            "source": "EqualsExpected",
        }
    }
    assert json.loads(str(seen["scores"]))["words"]["value"] == 4.0
    assert json.loads(str(seen["labels"]))["size"]["value"] == "short"
    assert tea.status.status_code is StatusCode.UNSET
    # A case without an expected output has none on its span; a failed assertion is no error.
    assert "expected_output" not in attributes(cake)
    assert json.loads(str(attributes(cake)["assertions"]))["Contains"]["value"] is False
    assert cake.status.status_code is StatusCode.UNSET
    evaluators = {(span.name, parent_id(span)) for span in spans if span.name.startswith("eval")}
    assert evaluators >= {
        ("evaluator: EqualsExpected", span_id(tea)),
        ("evaluator: words", span_id(tea)),
        ("evaluator: Contains", span_id(cake)),
    }
    everything = json.dumps([attributes(span) for span in spans], default=str)
    assert SECRET in os.environ["ANTHROPIC_API_KEY"] and SECRET not in everything


async def test_concurrent_cases_each_parent_only_their_own_tasks_spans(
    exporter: InMemorySpanExporter,
) -> None:
    both_in_tools = asyncio.Barrier(2)

    @tool
    async def alpha() -> str:
        """Wait until the other case is in its tool too, then answer."""
        await both_in_tools.wait()
        return "a"

    @tool
    async def beta() -> str:
        """Wait until the other case is in its tool too, then answer."""
        await both_in_tools.wait()
        return "b"

    async def task(inputs: str | TurnInput) -> TurnOutput:
        model = ScriptedProvider(
            [tool_call_response(ToolUsePart("c1", str(inputs), {})), text_response("done")]
        )
        turn = NeuronTurn(
            model,
            tools=ToolRegistry([alpha, beta]),
            config=NeuronTurnConfig(agent=str(inputs), model="m-1"),
        )
        return await turn.execute(TurnInput(message="go", trigger="user"))

    trees: dict[str, SpanTree] = {}

    @evaluator
    def keep(ctx: EvaluatorContext) -> bool:
        trees[ctx.name] = ctx.span_tree
        return True

    dataset = Dataset([Case("a", "alpha"), Case("b", "beta")], evaluators=[keep])

    report = await dataset.evaluate(task)

    assert [case.name for case in report.cases if case.passed] == ["a", "b"]
    spans = exporter.get_finished_spans()
    by_id = {span_id(span): span for span in spans}
    for case_name, own in (("a", "alpha"), ("b", "beta")):
        case_span = only(spans, f"case: {case_name}")
        agent = only(spans, f"invoke_agent {own}")
        assert parent_id(agent) == span_id(case_span)
        tool_span = only(spans, f"execute_tool {own}")
        assert by_id[parent_id(tool_span) or 0] is agent
        # The case's span tree holds its task's spans only: not its own span, nor the run's.
        (root,) = trees[case_name].roots
        assert root.name == f"invoke_agent {own}"
        assert root.parent_span_id == span_id(case_span)
        assert not trees[case_name].any({"name_contains": "case: "})
        assert len(trees[case_name]) == 4


async def test_an_evaluator_that_raises_is_recorded_on_its_case_span_and_the_run_goes_on(
    exporter: InMemorySpanExporter,
) -> None:
    @evaluator
    def fussy(ctx: EvaluatorContext) -> bool:
        if ctx.name == "cake":
            raise ValueError("no verdict for cake")
        return True

    dataset = Dataset([Case("tea", "tea"), Case("cake", "cake")], evaluators=[fussy, words])

    report = await dataset.evaluate(priced)

    (failure,) = report.case("cake").evaluator_failures
    assert (failure.name, failure.error_type, failure.message) == (
        "fussy",
        "ValueError",
        "no verdict for cake",
    )
    assert report.case("cake").scores["words"].value == 4.0
    assert report.case("tea").passed
    spans = exporter.get_finished_spans()
    cake = only(spans, "case: cake")
    assert cake.status.status_code is StatusCode.ERROR
    assert cake.status.description == "ValueError: no verdict for cake"
    (event,) = cake.events
    assert event.name == "exception"
    seen = dict(event.attributes or {})
    trace = str(seen.pop("exception.stacktrace"))
    assert seen == {
        "exception.type": "ValueError",
        "exception.message": "no verdict for cake",
        "evaluator_name": "fussy",
    }
    assert ", in fussy\n" in trace and trace.endswith("ValueError: no verdict for cake\n")
    own = [span for span in named(spans, "evaluator: fussy") if parent_id(span) == span_id(cake)]
    assert [span.status.status_code for span in own] == [StatusCode.ERROR]
    assert only(spans, "case: tea").status.status_code is StatusCode.UNSET
    assert only(spans, "case: tea").events == ()


async def test_a_task_that_raises_is_recorded_on_its_case_span_without_an_output(
    exporter: InMemorySpanExporter,
) -> None:
    async def broken(inputs: str | TurnInput) -> str:
        raise RuntimeError(f"no shop for {inputs}")

    report = await Dataset([Case("tea", "tea")], evaluators=[words]).evaluate(broken)

    assert report.case("tea").task_error is not None
    tea = only(exporter.get_finished_spans(), "case: tea")
    assert tea.status.status_code is StatusCode.ERROR
    assert "output" not in attributes(tea)
    (event,) = tea.events
    seen = dict(event.attributes or {})
    trace = str(seen.pop("exception.stacktrace"))
    assert seen == {"exception.type": "RuntimeError", "exception.message": "no shop for tea"}
    assert ", in broken\n" in trace and trace.endswith("RuntimeError: no shop for tea\n")


async def test_a_judges_turn_is_under_its_evaluators_span_not_in_the_cases_tree(
    exporter: InMemorySpanExporter,
) -> None:
    def judge_model(request: ProviderRequest) -> ProviderResponse:
        verdict = {"reason": "Gives a price.", "passed": True, "score": 0.8}
        return text_response(json.dumps(verdict), cost=usd("0.0001"))

    trees: dict[str, SpanTree] = {}

    @evaluator
    def keep(ctx: EvaluatorContext) -> bool:
        trees[ctx.name] = ctx.span_tree
        return True

    judge = LLMJudge("Does it give a price?", provider=FunctionProvider(judge_model))
    dataset = Dataset([Case("tea", "tea")], evaluators=[judge, keep])

    report = await dataset.evaluate(priced)

    assert report.case("tea").assertions["LLMJudge"].value is True
    spans = exporter.get_finished_spans()
    judging = only(spans, "evaluator: LLMJudge")
    assert parent_id(judging) == span_id(only(spans, "case: tea"))
    judged = [span for span in spans if parent_id(span) == span_id(judging)]
    assert [span.name.split()[0] for span in judged] == ["invoke_agent"]
    assert [root.name for root in trees["tea"].roots] == ["invoke_agent shop"]


async def test_repeated_runs_have_a_case_span_each_named_as_the_report_names_them(
    exporter: InMemorySpanExporter,
) -> None:
    await Dataset([Case("tea", "tea")]).evaluate(priced, repeat=2)

    spans = exporter.get_finished_spans()
    cases = sorted(span.name for span in spans if span.name.startswith("case: "))
    assert cases == ["case: tea [1/2]", "case: tea [2/2]"]
    assert attributes(only(spans, "evaluate priced"))["repeat"] == 2


async def test_nothing_is_made_once_tracing_is_off(exporter: InMemorySpanExporter) -> None:
    dataset = Dataset([Case("tea", "tea")], evaluators=[words])
    await dataset.evaluate(priced)
    assert named(exporter.get_finished_spans(), "case: tea")
    exporter.clear()
    uninstrument()

    report = await dataset.evaluate(priced)

    assert report.case("tea").passed
    assert exporter.get_finished_spans() == ()
    # Not only elsewhere: no run makes spans at all, wherever they would go.
    assert type(run_spans()) is RunSpans


async def test_an_output_past_the_bound_is_cut_naming_its_full_length(
    exporter: InMemorySpanExporter,
) -> None:
    huge = "x" * 1_000_000

    async def verbose(inputs: str | TurnInput) -> dict[str, str]:
        return {"answer": huge}

    await Dataset([Case("tea", huge)]).evaluate(verbose)

    seen = attributes(only(exporter.get_finished_spans(), "case: tea"))
    inputs, output = str(seen["inputs"]), str(seen["output"])
    assert inputs == "x" * MAX_ATTRIBUTE_CHARS + "... [cut: 1000000 characters in all]"
    whole = len(json.dumps({"answer": huge}, separators=(",", ":")))
    assert output.startswith('{"answer":"xxx')
    assert output.endswith(f"... [cut: {whole} characters in all]")
    assert len(output) < MAX_ATTRIBUTE_CHARS + 50


async def test_a_case_span_carries_what_its_task_recorded_as_json_attributes(
    exporter: InMemorySpanExporter,
) -> None:
    async def task(inputs: str | TurnInput) -> str:
        if inputs == "tea":
            set_eval_attribute("prompt", {"version": 2, "tags": ["short"]})
            increment_eval_metric("retries", 2)
            increment_eval_metric("retries", 1)
            increment_eval_metric("seconds", 0.5)
        return "ok"

    await Dataset([Case("tea", "tea"), Case("cake", "cake")]).evaluate(task)

    spans = exporter.get_finished_spans()
    tea, cake = attributes(only(spans, "case: tea")), attributes(only(spans, "case: cake"))
    assert tea["attributes"] == '{"prompt":{"version":2,"tags":["short"]}}'
    assert json.loads(str(tea["metrics"])) == {"retries": 3, "seconds": 0.5}
    assert (cake["attributes"], cake["metrics"]) == ("{}", "{}")


async def test_a_task_s_record_is_on_its_span_even_when_it_then_raised_and_is_cut_when_long(
    exporter: InMemorySpanExporter,
) -> None:
    async def task(inputs: str | TurnInput) -> str:
        set_eval_attribute("document", "x" * 1_000_000)
        increment_eval_metric("pages", 3)
        raise RuntimeError("gave up")

    await Dataset([Case("tea", "tea")]).evaluate(task)

    seen = attributes(only(exporter.get_finished_spans(), "case: tea"))
    recorded = str(seen["attributes"])
    assert recorded.startswith('{"document":"xxx')
    whole = len(json.dumps({"document": "x" * 1_000_000}, separators=(",", ":")))
    assert recorded.endswith(f"... [cut: {whole} characters in all]")
    assert len(recorded) < MAX_ATTRIBUTE_CHARS + 50
    assert seen["metrics"] == '{"pages":3}'


async def test_an_evaluator_s_own_span_records_its_exception_with_the_stack_trace(
    exporter: InMemorySpanExporter,
) -> None:
    def refuse(ctx: EvaluatorContext) -> bool:
        raise LookupError(f"nothing to judge in {ctx.name}")

    @evaluator
    def strict(ctx: EvaluatorContext) -> bool:
        return refuse(ctx)

    await Dataset([Case("tea", "tea")], evaluators=[strict]).evaluate(priced)

    own = only(exporter.get_finished_spans(), "evaluator: strict")
    (event,) = own.events
    seen = dict(event.attributes or {})
    assert (seen["exception.type"], seen["exception.message"]) == (
        "LookupError",
        "nothing to judge in tea",
    )
    trace = str(seen["exception.stacktrace"])
    assert ", in strict\n" in trace and ", in refuse\n" in trace
    assert trace.endswith("LookupError: nothing to judge in tea\n")


async def test_a_long_stack_trace_on_an_exception_event_keeps_its_end_within_the_bound(
    exporter: InMemorySpanExporter,
) -> None:
    async def loud(inputs: str | TurnInput) -> str:
        raise ValueError("x" * 50_000 + " the end")

    await Dataset([Case("tea", "tea")]).evaluate(loud)

    (event,) = only(exporter.get_finished_spans(), "case: tea").events
    seen = dict(event.attributes or {})
    trace = str(seen["exception.stacktrace"])
    assert len(trace) == MAX_ATTRIBUTE_CHARS
    assert trace.startswith("[cut: ") and trace.endswith("xxx the end\n")
    assert str(seen["exception.message"]).endswith("characters in all]")


def test_without_opentelemetry_neuron_evals_imports_and_runs(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys

        # As if neither OpenTelemetry nor the tracing plugin were installed.
        for name in ("opentelemetry", "neuron_tracing_otel"):
            sys.modules[name] = None

        from neuron_evals import Case, Contains, Dataset


        async def echo(inputs):
            return f"echo {inputs}"


        report = Dataset([Case("tea", "tea")], evaluators=[Contains("tea")]).evaluate_sync(echo)
        assert report.case("tea").passed, report.render()
        loaded = [name for name, module in sys.modules.items() if module is not None]
        assert not [name for name in loaded if name.startswith("opentelemetry")]
        print("ran")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ran"), done.stderr
