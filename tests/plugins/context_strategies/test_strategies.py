"""Each strategy on its own: options, what it keeps, what it does when a summary fails."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from importlib.metadata import entry_points

import pytest
from neuron_context_strategies import (
    CLEARED_PREFIX,
    SUMMARY_PREFIX,
    BudgetRequiredError,
    ClearToolResults,
    Staged,
    StrategyOptionError,
    Summarize,
    plugin,
    tiered,
)

from layer0 import Base64Source
from neuron_turn import (
    DocumentPart,
    ImagePart,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    get_context_strategy,
)
from neuron_turn.loop.context import CompactionBudget
from neuron_turn.loop.tokens import estimate_tokens
from neuron_turn.testing import FunctionProvider, text_response


def user(text: str, *, pinned: bool = False) -> ProviderMessage:
    return ProviderMessage("user", [TextPart(text)], pinned=pinned)


def exchange(n: int, size: int = 2_000, *, pinned: bool = False) -> list[ProviderMessage]:
    return [
        ProviderMessage("assistant", [ToolUsePart(f"c{n}", "fetch", {"n": n})], pinned=pinned),
        ProviderMessage("user", [ToolResultPart(f"c{n}", f"r{n} " + "x" * size)]),
    ]


def budget(limit: int, answer: str = "the gist") -> CompactionBudget:
    def respond(request: ProviderRequest) -> ProviderResponse:
        return text_response(answer)

    return CompactionBudget(
        limit=limit,
        tokens=0,
        count=estimate_tokens,
        provider=FunctionProvider(respond),
        model="m",
    )


def results(messages: Sequence[ProviderMessage]) -> list[str]:
    return [p.content[:3] for m in messages for p in m.content if isinstance(p, ToolResultPart)]


def test_the_entry_point_registers_three_strategies_by_name() -> None:
    (ep,) = [ep for ep in entry_points(group="neuron_turn") if ep.name == "context-strategies"]
    assert ep.load() is plugin
    assert isinstance(get_context_strategy("clear_tool_results", keep=1), ClearToolResults)
    assert isinstance(get_context_strategy("summarize", model="cheap"), Summarize)
    assert isinstance(get_context_strategy("tiered"), Staged)
    assert get_context_strategy("tiered").name == "tiered"


async def test_clearing_keeps_the_newest_results_and_pinned_exchanges_whole() -> None:
    messages = [user("task"), *exchange(1, pinned=True), *exchange(2), *exchange(3), *exchange(4)]
    strategy = ClearToolResults(keep=1)
    cleared = await strategy.reduce(messages, budget(limit=1))
    contents = [p.content for m in cleared for p in m.content if isinstance(p, ToolResultPart)]
    assert contents[0].startswith("r1 ")  # pinned
    assert contents[1].startswith(CLEARED_PREFIX)
    assert contents[2].startswith(CLEARED_PREFIX)
    assert contents[3].startswith("r4 ")  # the newest
    assert len(cleared) == len(messages)


async def test_clearing_stops_as_soon_as_the_conversation_fits() -> None:
    messages = [user("task"), *exchange(1), *exchange(2), *exchange(3)]
    fits = estimate_tokens(messages) - 400
    cleared = await ClearToolResults(keep=0).reduce(messages, budget(limit=fits))
    assert results(cleared) == [CLEARED_PREFIX[:3], "r2 ", "r3 "]


SHOT = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
PDF = DocumentPart(Base64Source(data="JVBERi0x"), "application/pdf", "q3.pdf")


def with_files(messages: list[ProviderMessage]) -> list[ProviderMessage]:
    """`messages` with the files SHOT and PDF on every tool result."""
    return [
        ProviderMessage(
            m.role,
            [
                replace(p, files=(SHOT, PDF)) if isinstance(p, ToolResultPart) else p
                for p in m.content
            ],
            pinned=m.pinned,
        )
        for m in messages
    ]


async def test_clearing_a_result_drops_its_files_and_names_them() -> None:
    messages = with_files([user("task"), *exchange(1, size=10), *exchange(2, size=10)])
    cleared = await ClearToolResults(keep=1).reduce(messages, budget(limit=1))
    old, new = [p for m in cleared for p in m.content if isinstance(p, ToolResultPart)]
    assert old.files == ()
    assert old.content == (
        f"{CLEARED_PREFIX}: 13 characters and 2 files "
        "(an image (image/png); the document q3.pdf (application/pdf))]"
    )
    assert new.files == (SHOT, PDF)  # the newest is kept whole
    assert estimate_tokens(cleared) < estimate_tokens(messages) - 1_000


async def test_a_result_whose_text_was_cleared_still_loses_its_files() -> None:
    result = ToolResultPart("c1", f"{CLEARED_PREFIX}: 900 characters]", files=(SHOT,))
    call = ProviderMessage("assistant", [ToolUsePart("c1", "fetch", {})])
    messages = [user("task"), call, ProviderMessage("user", [result])]
    cleared = await ClearToolResults(keep=0).reduce(messages, budget(limit=1))
    expected = f"{CLEARED_PREFIX}: 900 characters and 1 file (an image (image/png))]"
    assert cleared[-1].content == [ToolResultPart("c1", expected)]


async def test_a_failed_summary_call_is_logged_and_the_strategy_slides(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def refuse(request: ProviderRequest) -> ProviderResponse:
        raise RateLimitError("slow down")

    messages = [user("task"), *(m for n in range(10) for m in exchange(n))]
    limit = 2_000
    broken = CompactionBudget(
        limit=limit, tokens=0, count=estimate_tokens, provider=FunctionProvider(refuse), model="m"
    )
    with caplog.at_level(logging.WARNING, logger="neuron_context_strategies"):
        kept = await Summarize().compact(messages, budget=broken)
    assert estimate_tokens(kept) <= limit
    assert "summary call failed" in caplog.text
    texts = [p.text for m in kept for p in m.content if isinstance(p, TextPart)]
    assert not any(SUMMARY_PREFIX in text for text in texts)


async def test_a_summary_names_the_model_from_the_options() -> None:
    seen: list[ProviderRequest] = []

    def respond(request: ProviderRequest) -> ProviderResponse:
        seen.append(request)
        return text_response("short")

    messages = [user("task"), *(m for n in range(10) for m in exchange(n)), user("now")]
    summary_budget = CompactionBudget(
        limit=2_000, tokens=0, count=estimate_tokens, provider=FunctionProvider(respond), model="m"
    )
    kept = await Summarize(model="cheap-model").compact(messages, budget=summary_budget)
    assert {r.model for r in seen} == {"cheap-model"}
    assert kept[0] == messages[0]
    assert kept[-1] == messages[-1]
    assert any(isinstance(p, TextPart) and SUMMARY_PREFIX in p.text for p in kept[1].content)


async def test_the_summariser_reads_that_a_document_and_an_image_were_sent() -> None:
    seen: list[ProviderRequest] = []

    def respond(request: ProviderRequest) -> ProviderResponse:
        seen.append(request)
        return text_response("short")

    pdf = DocumentPart(Base64Source(data="JVBERi0x"), "application/pdf", "report.pdf")
    photo = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
    sent = ProviderMessage("user", [TextPart("task"), pdf, photo])
    messages = [user("start"), sent, *(m for n in range(10) for m in exchange(n)), user("now")]
    summary_budget = CompactionBudget(
        limit=2_000, tokens=0, count=estimate_tokens, provider=FunctionProvider(respond), model="m"
    )
    await Summarize().compact(messages, budget=summary_budget)
    prompt = "".join(
        p.text for r in seen for m in r.messages for p in m.content if isinstance(p, TextPart)
    )
    assert "user sent a document: report.pdf" in prompt
    assert "user sent an image (image/png)" in prompt


async def test_the_summariser_reads_which_files_a_tool_returned_never_their_data() -> None:
    seen: list[ProviderRequest] = []

    def respond(request: ProviderRequest) -> ProviderResponse:
        seen.append(request)
        return text_response("short")

    messages = [user("task"), *with_files([m for n in range(10) for m in exchange(n)]), user("now")]
    summary_budget = CompactionBudget(
        limit=2_000, tokens=0, count=estimate_tokens, provider=FunctionProvider(respond), model="m"
    )
    await Summarize().compact(messages, budget=summary_budget)
    prompt = "".join(
        p.text for r in seen for m in r.messages for p in m.content if isinstance(p, TextPart)
    )
    assert (
        "the tool returned with it [id c0]: "
        "an image (image/png); the document q3.pdf (application/pdf)"
    ) in prompt
    assert "iVBORw0KGgo" not in prompt and "JVBERi0x" not in prompt


async def test_compact_without_the_loops_budget_says_what_it_needs() -> None:
    with pytest.raises(BudgetRequiredError, match="needs the loop's budget"):
        await tiered().compact([user("x")])


@pytest.mark.parametrize(
    ("build", "option"),
    [
        (lambda: ClearToolResults(keep=-1), "keep"),
        (lambda: ClearToolResults(min_chars=-1), "min_chars"),
        (lambda: Summarize(keep_recent=1.0), "keep_recent"),
        (lambda: Summarize(max_summary_tokens=0), "max_summary_tokens"),
        (lambda: tiered(keep_recent=0), "keep_recent"),
    ],
)
def test_bad_options_are_refused_naming_the_option(build: object, option: str) -> None:
    with pytest.raises(StrategyOptionError, match=option):
        build()  # type: ignore[operator]
