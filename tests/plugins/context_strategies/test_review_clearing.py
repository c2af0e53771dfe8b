"""A result that alone outweighs the budget is cleared by every staged strategy; a tool's
output that only looks cleared is cleared too."""

from __future__ import annotations

from dataclasses import replace

from neuron_context_strategies import CLEARED_PREFIX, ClearToolResults, Summarize, tiered

from neuron_turn import ProviderMessage, TextPart, ToolResultPart, ToolUsePart
from neuron_turn.loop.context import CompactionBudget
from neuron_turn.loop.tokens import estimate_tokens
from neuron_turn.testing import FunctionProvider, text_response


def exchange(n: int, text: str) -> list[ProviderMessage]:
    return [
        ProviderMessage("assistant", [ToolUsePart(f"c{n}", "fetch", {"n": n})]),
        ProviderMessage("user", [ToolResultPart(f"c{n}", text)]),
    ]


def budget(limit: int) -> CompactionBudget:
    return CompactionBudget(
        limit=limit,
        tokens=0,
        count=estimate_tokens,
        provider=FunctionProvider(lambda request: text_response("the gist")),
        model="m",
    )


def result_texts(messages: list[ProviderMessage]) -> dict[str, str]:
    return {
        p.tool_use_id: p.content
        for m in messages
        for p in m.content
        if isinstance(p, ToolResultPart)
    }


def task() -> ProviderMessage:
    return ProviderMessage("user", [TextPart("task")])


async def test_the_newest_result_larger_than_the_whole_budget_is_cleared_with_its_call_kept() -> (
    None
):
    messages = [task(), *exchange(1, "page one " * 20), *exchange(2, "y" * 200_000)]
    kept = await ClearToolResults(keep=3).compact(messages, budget=budget(8_000))
    texts = result_texts(kept)
    assert texts["c2"] == f"{CLEARED_PREFIX}: 200000 characters]"
    assert texts["c1"] == "page one " * 20  # under min_chars: kept
    assert [m.content[0] for m in kept[:2]] == [
        TextPart("task"),
        ToolUsePart("c1", "fetch", {"n": 1}),
    ]
    assert estimate_tokens(kept) <= 8_000


async def test_tiered_keeps_the_task_and_the_call_of_a_result_larger_than_the_budget() -> None:
    messages = [task(), *exchange(1, "y" * 200_000)]
    kept = await tiered(keep=3).compact(messages, budget=budget(8_000))
    assert kept[0].content == [TextPart("task")]
    assert result_texts(kept) == {"c1": f"{CLEARED_PREFIX}: 200000 characters]"}


async def test_summarize_clears_a_newest_result_larger_than_the_budget_after_summarising() -> None:
    messages = [task(), *exchange(1, "page one " * 500), *exchange(2, "y" * 200_000)]
    kept = await Summarize().compact(messages, budget=budget(8_000))
    texts = [p.text for m in kept for p in m.content if isinstance(p, TextPart)]
    assert texts[0] == "task" and texts[1].endswith("the gist")
    assert result_texts(kept) == {"c2": f"{CLEARED_PREFIX}: 200000 characters]"}


async def test_a_pinned_result_larger_than_the_budget_stays_whole() -> None:
    huge = "y" * 200_000
    pinned = [replace(m, pinned=True) for m in exchange(1, huge)]
    kept = await ClearToolResults().compact([task(), *pinned], budget=budget(8_000))
    assert result_texts(kept) == {"c1": huge}


async def test_a_long_tool_output_that_starts_like_a_placeholder_is_cleared_too() -> None:
    lure = f"{CLEARED_PREFIX}: 3 characters]" + "z" * 20_000  # under the budget alone
    newest = "w" * 20_000
    messages = [task(), *exchange(1, lure), *exchange(2, newest)]
    kept = await ClearToolResults(keep=1).compact(messages, budget=budget(8_000))
    assert result_texts(kept) == {"c1": f"{CLEARED_PREFIX}: {len(lure)} characters]", "c2": newest}
