"""Tokens and cost aggregate exactly; an unpriced response or search declares one warning."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from layer0 import LogEffect, LogLevel
from neuron_turn import EffectDeclared, ProviderResponse, TokenUsage
from neuron_turn.testing import text_response, tool_call_response

from .support import answer, ask, build, call, calls, dollars


async def test_tokens_and_cost_add_up_exactly_across_iterations() -> None:
    script = [
        calls(call("c1", "add", a=1, b=1), cost="0.1", usage=TokenUsage(100, 7)),
        calls(call("c2", "add", a=2, b=2), cost="0.2", usage=TokenUsage(200, 8)),
        answer("done", cost="0.00000001", usage=TokenUsage(300, 9)),
    ]
    turn, _ = build(script)
    output = await turn.execute(ask())
    metadata = output.metadata
    assert (metadata.tokens_in, metadata.tokens_out, metadata.turns_used) == (600, 24, 3)
    assert metadata.cost == dollars("0.30000001")
    assert isinstance(metadata.cost.amount, Decimal)
    assert output.model_dump(mode="json")["metadata"]["cost"] == "0.30000001"


async def test_unknown_cost_adds_nothing_and_declares_one_warning_naming_the_model() -> None:
    unpriced = text_response("hi", model="mystery-7b")
    unpriced = type(unpriced)(
        content=unpriced.content,
        stop_reason="end_turn",
        usage=TokenUsage(5, 5),
        model="mystery-7b",
        cost=None,
    )
    turn, _ = build([unpriced])
    output = await turn.execute(ask())
    assert output.metadata.cost == dollars("0")
    (warning,) = output.effects
    assert isinstance(warning, LogEffect)
    assert warning.level == LogLevel.WARN
    assert "'mystery-7b'" in warning.message


async def test_the_same_unpriced_model_is_reported_once_per_turn() -> None:
    first = tool_call_response(call("c1", "add", a=1, b=1), model="mystery", usage=TokenUsage(1, 1))
    first = type(first)(first.content, "tool_use", first.usage, "mystery", None)
    second = type(first)((first.content[0],), "end_turn", first.usage, "mystery", None)
    turn, _ = build([first, second])
    output = await turn.execute(ask())
    assert len([e for e in output.effects if isinstance(e, LogEffect)]) == 1
    assert output.metadata.tokens_in == 2


async def test_a_halt_at_post_inference_still_counts_that_calls_tokens_and_cost() -> None:
    from layer0 import Halt, HookAction, HookContext, HookPoint
    from neuron_hooks import FunctionHook, HookRegistry

    async def stop(ctx: HookContext) -> HookAction:
        return Halt(reason="enough")

    hooks = HookRegistry()
    hooks.add(FunctionHook(stop, points=[HookPoint.POST_INFERENCE]))
    turn, _ = build([answer("x", cost="0.02", usage=TokenUsage(7, 3))], hooks=hooks)
    output = await turn.execute(ask())
    assert output.exit_reason != "complete"
    assert (output.metadata.tokens_in, output.metadata.tokens_out) == (7, 3)
    assert output.metadata.cost == dollars("0.02")


def _searched(response: ProviderResponse, searches: int) -> ProviderResponse:
    """`response` answered by the model "searcher", with `searches` no price covers."""
    return replace(response, model="searcher", unpriced_web_searches=searches)


async def test_unpriced_web_searches_keep_the_token_cost_warn_at_once_and_total_at_the_end() -> (
    None
):
    script = [
        _searched(calls(call("c1", "add", a=1, b=1), cost="0.1"), 2),
        _searched(answer("done", cost="0.2"), 3),
    ]
    turn, _ = build(script)

    events = [event async for event in turn.stream(ask())]

    output = events[-1].output  # type: ignore[attr-defined]
    assert output.metadata.cost == dollars("0.3")
    first, total = [e for e in output.effects if isinstance(e, LogEffect)]
    assert (first.level, total.level) == (LogLevel.WARN, LogLevel.WARN)
    assert first.message == (
        "web search price unknown for model 'searcher'; its 2 web searches are not counted "
        "in the cost"
    )
    assert first.data == {"model": "searcher", "web_searches": 2}
    assert total.message == (
        "web search price unknown for model 'searcher'; in all, this turn's 5 web searches are "
        "not counted in the cost"
    )
    assert total.data == {"model": "searcher", "web_searches": 5}
    # The first is declared as its call ends, before the tool runs.
    declared = [e for e in events if isinstance(e, EffectDeclared)]
    assert declared and declared[0].effect == first


async def test_one_unpriced_web_search_is_named_in_the_singular() -> None:
    turn, _ = build([_searched(answer("done", cost="0.1"), 1)])

    output = await turn.execute(ask())

    (warning,) = output.effects
    assert isinstance(warning, LogEffect)
    assert warning.message == (
        "web search price unknown for model 'searcher'; its 1 web search is not counted in the cost"
    )


async def test_an_unpriced_call_warns_of_its_price_only_not_of_its_searches() -> None:
    unknown = replace(text_response("hi", model="mystery"), cost=None, unpriced_web_searches=2)
    turn, _ = build([unknown])

    output = await turn.execute(ask())

    (warning,) = output.effects
    assert isinstance(warning, LogEffect)
    assert warning.message == "price unknown for model 'mystery'; its cost is not counted"
