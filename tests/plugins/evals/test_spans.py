"""Each case's spans, recorded under neuron-tracing-otel's real instrumentation.

The turns are real `NeuronTurn`s over `ScriptedProvider`s with tools; the spans
go to an SDK `TracerProvider` with no exporter, so nothing leaves the process.
"""

from __future__ import annotations

import asyncio
import sys

import pytest
from neuron_evals import (
    Case,
    Dataset,
    EvaluatorContext,
    FunctionEvaluator,
    HasMatchingSpan,
    SpanTree,
    SpanTreeRecordingError,
    evaluator,
)
from neuron_tracing_otel import instrument
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from pydantic import JsonValue

from layer0 import TurnInput, TurnOutput
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

pytestmark = pytest.mark.usefixtures("tracing_off")


@pytest.fixture
def provider() -> TracerProvider:
    """The SDK tracer provider neuron-tracing-otel writes the test's spans to."""
    tracer_provider = TracerProvider()
    instrument(tracer_provider=tracer_provider, capture_content=False)
    return tracer_provider


@tool
async def price(item: str) -> int:
    """The price of an item, in euros."""
    return {"tea": 3, "cake": 4}[item]


def _shop(tools: ToolRegistry, tool_name: str, arguments: dict[str, JsonValue]) -> NeuronTurn[str]:
    """A turn (agent `shop`, model `m-1`) whose model calls `tool_name` once, then answers."""
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("call_1", tool_name, arguments)),
            text_response("done"),
        ]
    )
    return NeuronTurn(model, tools=tools, config=NeuronTurnConfig(agent="shop", model="m-1"))


async def _priced(inputs: str | TurnInput) -> TurnOutput:
    """The task: a fresh turn per case (a scripted model plays its script once)."""
    return await _shop(ToolRegistry([price]), "price", {"item": str(inputs)}).execute(
        TurnInput(message=f"How much is {inputs}?", trigger="user")
    )


def _trees() -> tuple[dict[str, SpanTree], FunctionEvaluator]:
    """An evaluator keeping each case's span tree, by case name."""
    seen: dict[str, SpanTree] = {}

    @evaluator
    def keep(ctx: EvaluatorContext) -> bool:
        seen[ctx.name] = ctx.span_tree
        return True

    return seen, keep


async def test_a_turns_tool_call_is_found_among_its_cases_spans_with_its_attributes(
    provider: TracerProvider,
) -> None:
    seen, keep = _trees()
    dataset = Dataset(
        [Case("tea", "tea")],
        evaluators=[
            keep,
            HasMatchingSpan(
                {
                    "name_equals": "execute_tool price",
                    "has_attributes": {
                        "gen_ai.tool.name": "price",
                        "gen_ai.tool.call.id": "call_1",
                    },
                    "some_ancestor_has": {"name_equals": "invoke_agent shop"},
                }
            ),
            HasMatchingSpan({"name_equals": "execute_tool refund"}, evaluation_name="refunded"),
        ],
    )

    report = await dataset.evaluate(_priced)

    case = report.case("tea")
    assert case.evaluator_failures == []
    assert case.assertions["HasMatchingSpan"].value is True
    refunded = case.assertions["refunded"]
    assert refunded.value is False and refunded.reason == "no span of 4 matched"
    tree = seen["tea"]
    (agent,) = tree.roots
    assert agent.name == "invoke_agent shop"
    assert [child.name for child in agent.children] == [
        "chat m-1",
        "execute_tool price",
        "chat m-1",
    ]
    assert agent.attributes["neuron.turn.exit_reason"] == "complete"
    assert agent.duration.total_seconds() >= 0


async def test_concurrent_cases_never_see_each_others_spans(provider: TracerProvider) -> None:
    both_started, both_in_tools = asyncio.Barrier(2), asyncio.Barrier(2)

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
        # Both cases start their turns, then are inside their tool calls, at once:
        # their spans interleave from the first.
        await both_started.wait()
        turn = _shop(ToolRegistry([alpha, beta]), str(inputs), {})
        return await turn.execute(TurnInput(message="go", trigger="user"))

    seen, keep = _trees()
    dataset = Dataset(
        [Case("a", "alpha"), Case("b", "beta")],
        evaluators=[keep],
    )

    report = await dataset.evaluate(task)

    assert [case.name for case in report.cases if case.passed] == ["a", "b"]
    for name, own, other in (("a", "alpha", "beta"), ("b", "beta", "alpha")):
        names = [node.name for node in seen[name]]
        assert names == ["invoke_agent shop", "chat m-1", f"execute_tool {own}", "chat m-1"]
        assert not seen[name].any({"name_contains": other})
    # One run is one trace (its `evaluate` span's): the cases differ by their spans, not traces.
    assert {node.span_id for node in seen["a"]}.isdisjoint(node.span_id for node in seen["b"])
    (root_a,), (root_b,) = seen["a"].roots, seen["b"].roots
    assert root_a.parent_span_id != root_b.parent_span_id


async def test_spans_made_under_the_turn_are_its_descendants_even_from_another_thread(
    provider: TracerProvider,
) -> None:
    tracer = provider.get_tracer("shop-db")

    def query_prices(parent: Context) -> int:
        # An executor's thread has none of the case's context: only the span
        # handed over ties this one to the case.
        with tracer.start_as_current_span("SELECT prices", context=parent) as span:
            span.set_attribute("db.system", "sqlite")
            return 3

    @tool
    async def lookup(item: str) -> int:
        """Look the price up in the database, in a worker thread."""
        here = otel_context.get_current()
        return await asyncio.get_running_loop().run_in_executor(None, query_prices, here)

    async def task(inputs: str | TurnInput) -> TurnOutput:
        turn = _shop(ToolRegistry([lookup]), "lookup", {"item": "tea"})
        return await turn.execute(TurnInput(message="tea?", trigger="user"))

    dataset = Dataset(
        [Case("tea", "tea")],
        evaluators=[
            HasMatchingSpan(
                {
                    "name_equals": "execute_tool lookup",
                    "some_child_has": {"has_attributes": {"db.system": "sqlite"}},
                }
            )
        ],
    )

    report = await dataset.evaluate(task)

    assert report.case("tea").assertions["HasMatchingSpan"].value is True


async def test_a_span_around_the_run_is_in_no_cases_tree(provider: TracerProvider) -> None:
    seen, keep = _trees()
    dataset = Dataset([Case("tea", "tea"), Case("cake", "cake")], evaluators=[keep])

    with provider.get_tracer("ci").start_as_current_span("nightly evals") as outer:
        await dataset.evaluate(_priced)

    for tree in seen.values():
        assert [root.name for root in tree.roots] == ["invoke_agent shop"]
        # Neither the span around the run nor the run's and case's own spans are the task's.
        for other in ("nightly evals", "evaluate ", "case: "):
            assert not tree.any({"name_contains": other})
        assert tree.roots[0].parent_span_id not in (None, outer.get_span_context().span_id)
        assert len(tree) == 4


async def test_past_the_limit_a_cases_spans_are_counted_not_kept(
    provider: TracerProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("neuron_evals._span_processor.MAX_CASE_SPANS", 2)
    seen, keep = _trees()
    dataset = Dataset(
        [Case("tea", "tea")],
        evaluators=[keep, HasMatchingSpan({"name_contains": "invoke_agent"})],
    )

    report = await dataset.evaluate(_priced)

    # Spans are kept as they end: the first call and the tool end before the turn.
    assert [node.name for node in seen["tea"]] == ["chat m-1", "execute_tool price"]
    assert seen["tea"].dropped == 2
    result = report.case("tea").assertions["HasMatchingSpan"]
    assert result.value is False
    assert result.reason == "no span of 2 matched (2 more were not kept)"


def _failure(report_case: object) -> tuple[str, str]:
    (failure,) = report_case.evaluator_failures  # type: ignore[attr-defined]
    return failure.error_type, failure.message


async def test_without_the_instrumentation_a_span_evaluator_fails_saying_why() -> None:
    dataset = Dataset([Case("tea", "tea")], evaluators=[HasMatchingSpan({})])

    report = await dataset.evaluate(_priced)

    case = report.case("tea")
    assert "HasMatchingSpan" not in case.assertions
    error_type, message = _failure(case)
    assert error_type == "SpanTreeRecordingError"
    assert "neuron-tracing-otel is not instrumenting" in message
    assert "neuron_tracing_otel.instrument()" in message


async def test_a_tracer_provider_that_takes_no_processor_fails_naming_it() -> None:
    instrument(tracer_provider=trace.NoOpTracerProvider())
    dataset = Dataset([Case("tea", "tea")], evaluators=[HasMatchingSpan({})])

    report = await dataset.evaluate(_priced)

    error_type, message = _failure(report.case("tea"))
    assert error_type == "SpanTreeRecordingError"
    assert "(NoOpTracerProvider) takes no span processor" in message


async def test_without_the_tracing_plugin_a_span_evaluator_fails_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "neuron_tracing_otel", None)  # as if not installed
    dataset = Dataset([Case("tea", "tea")], evaluators=[HasMatchingSpan({})])

    report = await dataset.evaluate(_priced)

    error_type, message = _failure(report.case("tea"))
    assert error_type == "SpanTreeRecordingError"
    assert "neuron-tracing-otel is not installed" in message


def test_a_context_made_outside_a_run_has_no_span_tree() -> None:
    ctx = EvaluatorContext(
        name="x",
        inputs="hi",
        output="hi",
        output_text="hi",
        expected_output=None,
        metadata={},
        turn_output=None,
        duration=0.0,
    )
    with pytest.raises(SpanTreeRecordingError, match="made without a run"):
        _ = ctx.span_tree
