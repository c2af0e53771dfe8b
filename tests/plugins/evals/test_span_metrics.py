"""A case's model requests, tokens and cost, summed from its task's spans into its metrics.

Under neuron-tracing-otel's real instrumentation (an SDK `TracerProvider`
with no exporter); the tasks are real `NeuronTurn`s over scripted models.
The sums are pydantic-evals' metrics from spans (`requests`, `input_tokens`,
`output_tokens`, `cost`...), checked exactly.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from neuron_evals import (
    Case,
    Dataset,
    EvaluationReport,
    EvaluatorContext,
    FunctionEvaluator,
    SpanNode,
    SpanTree,
    evaluator,
    increment_eval_metric,
)
from neuron_evals._span_metrics import span_metrics
from neuron_tracing_otel import instrument
from opentelemetry.sdk.trace import TracerProvider

from layer0 import TurnInput, TurnOutput, usd
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, TokenUsage, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

ROOT = Path(__file__).resolve().parents[3]


pytestmark = pytest.mark.usefixtures("tracing_off")


@pytest.fixture
def traced() -> None:
    """neuron-tracing-otel instrumenting, to an SDK provider with no exporter."""
    instrument(tracer_provider=TracerProvider(), capture_content=False)


@tool
async def price(item: str) -> int:
    """The price of an item, in euros."""
    return {"tea": 3, "cake": 4}[item]


def _shop() -> NeuronTurn[str]:
    """A turn whose model looks a price up, then answers: two requests, 22 tokens, $0.0007."""
    model = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("c1", "price", {"item": "tea"}),
                usage=TokenUsage(10, 2, cache_read_tokens=6, cache_creation_tokens=4),
                cost=usd("0.0004"),
            ),
            text_response(
                "3 euros", usage=TokenUsage(12, 3, cache_read_tokens=10), cost=usd("0.0003")
            ),
        ]
    )
    return NeuronTurn(
        model, tools=ToolRegistry([price]), config=NeuronTurnConfig(agent="shop", model="m-1")
    )


async def _shop_task(inputs: str | TurnInput) -> TurnOutput:
    """A fresh turn per case (a scripted model plays its script once)."""
    return await _shop().execute(TurnInput(message=str(inputs), trigger="user"))


SHOP_METRICS: Mapping[str, int | float] = {
    "requests": 2,
    "input_tokens": 22,
    "output_tokens": 5,
    "cache_read_tokens": 16,
    "cache_write_tokens": 4,
    "cost": 0.0007,
}


def _seen() -> tuple[dict[str, Mapping[str, int | float]], FunctionEvaluator]:
    """An evaluator keeping the metrics each case's evaluators see, by case name."""
    seen: dict[str, Mapping[str, int | float]] = {}

    @evaluator
    def keep(ctx: EvaluatorContext) -> bool:
        seen[ctx.name] = dict(ctx.metrics)
        return True

    return seen, keep


async def test_a_turns_requests_tokens_and_cost_are_its_cases_metrics(traced: None) -> None:
    seen, keep = _seen()
    dataset = Dataset([Case("tea", "How much is tea?")], evaluators=[keep])

    report = await dataset.evaluate(_shop_task)

    case = report.case("tea")
    assert case.passed
    assert case.metrics == SHOP_METRICS
    assert list(case.metrics) == list(SHOP_METRICS)  # requests first, cost last
    assert isinstance(case.metrics["requests"], int) and isinstance(case.metrics["cost"], float)
    assert seen["tea"] == SHOP_METRICS
    # The turn's own facts agree: the report's cost is the exact Money, apart.
    assert (case.tokens_in, case.tokens_out, case.cost) == (22, 5, usd("0.0007"))
    assert report.summary().mean_metrics == {name: float(v) for name, v in SHOP_METRICS.items()}


async def test_what_the_task_records_under_the_same_names_adds_to_the_spans(
    traced: None,
) -> None:
    async def task(inputs: str | TurnInput) -> TurnOutput:
        increment_eval_metric("retries", 1)
        increment_eval_metric("requests", 5)
        increment_eval_metric("cost", 0.0001)
        return await _shop_task(inputs)

    report = await Dataset([Case("tea", "How much is tea?")]).evaluate(task)

    metrics = report.case("tea").metrics
    # The task's own names first, in the order it incremented them, then the spans'.
    assert list(metrics) == [
        "retries",
        "requests",
        "cost",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
    ]
    assert metrics["retries"] == 1
    assert metrics["requests"] == 5 + 2
    assert metrics["cost"] == pytest.approx(0.0001 + 0.0007, abs=1e-15)
    assert metrics["input_tokens"] == 22


async def test_a_sub_agents_requests_inside_the_task_are_the_tasks_cost(traced: None) -> None:
    @tool
    async def ask_expert(question: str) -> str:
        """Ask another agent, which answers after one tool call of its own."""
        expert_model = ScriptedProvider(
            [
                tool_call_response(
                    ToolUsePart("e1", "price", {"item": "cake"}),
                    usage=TokenUsage(100, 10),
                    cost=usd("0.01"),
                ),
                text_response("4 euros", usage=TokenUsage(120, 20), cost=usd("0.02")),
            ]
        )
        expert = NeuronTurn(
            expert_model,
            tools=ToolRegistry([price]),
            config=NeuronTurnConfig(agent="expert", model="m-2"),
        )
        output = await expert.execute(TurnInput(message=question, trigger="user"))
        return output.message.as_text() or ""

    async def task(inputs: str | TurnInput) -> TurnOutput:
        model = ScriptedProvider(
            [
                tool_call_response(
                    ToolUsePart("c1", "ask_expert", {"question": "cake?"}),
                    usage=TokenUsage(1, 1),
                    cost=usd("0.001"),
                ),
                text_response("4 euros", usage=TokenUsage(2, 1), cost=usd("0.002")),
            ]
        )
        lead = NeuronTurn(
            model,
            tools=ToolRegistry([ask_expert]),
            config=NeuronTurnConfig(agent="lead", model="m-1"),
        )
        return await lead.execute(TurnInput(message=str(inputs), trigger="user"))

    report = await Dataset([Case("cake", "How much is cake?")]).evaluate(task)

    case = report.case("cake")
    assert case.metrics == {
        "requests": 4,
        "input_tokens": 1 + 100 + 120 + 2,
        "output_tokens": 1 + 10 + 20 + 1,
        "cost": 0.033,
    }


async def test_concurrent_cases_each_count_their_own_requests_only(traced: None) -> None:
    arrived = {"a": asyncio.Event(), "b": asyncio.Event()}

    @tool
    async def meet(case: str) -> str:
        """Say this case is in a tool call, then wait until the other one is too."""
        arrived[case].set()
        await arrived["b" if case == "a" else "a"].wait()
        return "met"

    def calls(case: str, count: int, usage: TokenUsage, cost: str) -> ScriptedProvider:
        steps = [
            tool_call_response(
                ToolUsePart(f"{case}{index}", "meet", {"case": case}), usage=usage, cost=usd(cost)
            )
            for index in range(count)
        ]
        return ScriptedProvider([*steps, text_response("done", usage=usage, cost=usd(cost))])

    models = {
        "a": calls("a", 1, TokenUsage(10, 2), "0.001"),
        "b": calls("b", 3, TokenUsage(7, 3), "0.0003"),
    }

    async def task(inputs: str | TurnInput) -> TurnOutput:
        turn = NeuronTurn(
            models[str(inputs)],
            tools=ToolRegistry([meet]),
            config=NeuronTurnConfig(agent="shop", model="m-1"),
        )
        return await turn.execute(TurnInput(message="go", trigger="user"))

    report = await Dataset([Case("a", "a"), Case("b", "b")]).evaluate(task)

    assert report.case("a").metrics == {
        "requests": 2,
        "input_tokens": 20,
        "output_tokens": 4,
        "cost": 0.002,
    }
    assert report.case("b").metrics == {
        "requests": 4,
        "input_tokens": 28,
        "output_tokens": 12,
        "cost": 0.0012,
    }


async def test_a_task_that_raises_keeps_only_what_it_recorded(traced: None) -> None:
    async def task(inputs: str | TurnInput) -> TurnOutput:
        increment_eval_metric("attempts", 1)
        await _shop_task(inputs)
        raise RuntimeError("the answer was lost")

    report = await Dataset([Case("tea", "How much is tea?")]).evaluate(task)

    case = report.case("tea")
    assert case.task_error is not None and case.task_error.message == "the answer was lost"
    assert case.metrics == {"attempts": 1}


async def test_without_instrumentation_nothing_is_derived() -> None:
    async def task(inputs: str | TurnInput) -> TurnOutput:
        increment_eval_metric("attempts", 1)
        return await _shop_task(inputs)

    report = await Dataset([Case("tea", "How much is tea?")]).evaluate(task)

    case = report.case("tea")
    assert case.passed and case.metrics == {"attempts": 1}
    assert case.cost == usd("0.0007")


async def test_without_the_tracing_plugin_nothing_is_derived(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    instrument(tracer_provider=TracerProvider(), capture_content=False)
    monkeypatch.setitem(sys.modules, "neuron_tracing_otel", None)  # as if not installed

    report = await Dataset([Case("tea", "How much is tea?")]).evaluate(_shop_task)

    case = report.case("tea")
    assert case.passed and case.metrics == {}


def test_without_opentelemetry_a_turn_runs_and_nothing_is_derived(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys

        # As if neither OpenTelemetry nor the tracing plugin were installed.
        for name in ("opentelemetry", "neuron_tracing_otel"):
            sys.modules[name] = None

        from layer0 import usd
        from neuron_evals import Case, Dataset
        from neuron_turn import NeuronTurn, TokenUsage
        from neuron_turn.testing import ScriptedProvider, text_response

        model = ScriptedProvider([text_response("hi", usage=TokenUsage(3, 1), cost=usd("0.1"))])
        report = Dataset([Case("hi", "hi")]).evaluate_sync(NeuronTurn(model))
        case = report.case("hi")
        assert case.passed and case.metrics == {}, case
        assert case.tokens_in == 3
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


async def test_derived_metrics_render_round_trip_and_compare(traced: None) -> None:
    report = await Dataset([Case("tea", "How much is tea?")]).evaluate(_shop_task)

    assert "requests=2, input_tokens=22" in report.render(width=200)
    assert "Mean metrics: requests=2, input_tokens=22, output_tokens=5" in report.render()
    again = EvaluationReport.from_json(report.to_json())
    assert again.case("tea").metrics == SHOP_METRICS
    assert again == report
    changes = report.compare(again).cases[0].metrics
    assert changes == {name: (value, value) for name, value in SHOP_METRICS.items()}


def test_a_report_stored_before_derived_metrics_still_loads() -> None:
    stored = """
    {"name": "shop", "duration": 0.5, "cases": [
      {"name": "tea", "inputs": "How much is tea?", "output": "3 euros",
       "output_text": "3 euros", "exit_reason": "complete", "cost": "0.0007",
       "tokens_in": 22, "tokens_out": 5, "turns_used": 2, "tools_called": ["price"],
       "duration": 0.01}
    ],
     "summary": {"ignored": true}}
    """

    old = EvaluationReport.from_json(stored)

    assert old.case("tea").metrics == {}
    assert "Mean metrics" not in old.render()


# The rules, on spans made by hand: what is a request, what is usage, what is skipped.

_START = datetime(2026, 1, 1, tzinfo=UTC)


def _node(
    span_id: int, parent: int | None, attributes: Mapping[str, object], *, at: int = 0
) -> SpanNode:
    return SpanNode(
        name=f"span {span_id}",
        trace_id=1,
        span_id=span_id,
        parent_span_id=parent,
        start_timestamp=_START + timedelta(milliseconds=at),
        end_timestamp=_START + timedelta(milliseconds=at + 1),
        attributes=attributes,  # type: ignore[arg-type]
    )


def test_only_chat_spans_count_and_a_chat_under_a_chat_is_the_same_request() -> None:
    agent = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.request.model": "m-1",
        "gen_ai.usage.input_tokens": 30,
        "neuron.cost.usd": 0.5,
    }
    ours = {
        "gen_ai.operation.name": "chat",
        "gen_ai.usage.input_tokens": 30,
        "neuron.cost.usd": 0.5,
    }
    # An SDK's own instrumentation of the same call, under ours.
    sdks = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 30}
    tool_span = {"gen_ai.operation.name": "execute_tool", "gen_ai.usage.input_tokens": 9}
    tree = SpanTree(
        [
            _node(1, None, agent, at=0),
            _node(2, 1, ours, at=1),
            _node(3, 2, sdks, at=2),
            _node(4, 1, tool_span, at=3),
        ]
    )

    assert span_metrics(tree) == {"requests": 1, "input_tokens": 30, "cost": 0.5}


def test_usage_details_and_pydantic_ais_cost_are_summed_under_pydantic_evals_names() -> None:
    pydantic_ai = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-x",
        "gen_ai.usage.input_tokens": 5,
        "gen_ai.usage.details.reasoning_tokens": 7,
        "gen_ai.usage.details.cache_read_tokens": 2,
        "operation.cost": 0.1,
    }
    ours = {
        "gen_ai.operation.name": "chat",
        "gen_ai.usage.cache_read.input_tokens": 3,
        "neuron.cost.usd": 0.2,
    }
    tree = SpanTree([_node(1, None, pydantic_ai, at=0), _node(2, None, ours, at=1)])

    assert span_metrics(tree) == {
        "requests": 2,
        "input_tokens": 5,
        "reasoning_tokens": 7,
        "cache_read_tokens": 5,
        "cost": 0.3,  # summed in decimal: not 0.30000000000000004
    }


def test_what_is_no_amount_is_skipped_and_zero_sums_are_left_out() -> None:
    odd = {
        "gen_ai.operation.name": "chat",
        "gen_ai.usage.input_tokens": 0,
        "gen_ai.usage.output_tokens": True,
        "gen_ai.usage.details.audio_tokens": float("nan"),
        "gen_ai.usage.details.note": "many",
        "neuron.cost.usd": float("inf"),
        "operation.cost": 0.25,
    }

    assert span_metrics(SpanTree([_node(1, None, odd)])) == {"requests": 1, "cost": 0.25}
    assert span_metrics(SpanTree()) == {}
