"""A 300-step session through every strategy: under the limit, paired calls, pins kept."""

from __future__ import annotations

import pytest
from neuron_context_strategies import SUMMARY_PREFIX, Summarize

from layer0 import SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_tool import ToolRegistry
from neuron_turn import NeuronTurn, NeuronTurnConfig, get_context_strategy

from .session import FACTS, PINNED, LongSession, context_text, fetch, true_tokens
from .wire import anthropic_problems, openai_problems

LIMIT = 12_000
STEPS = 300
STRATEGIES = ["sliding_window", "clear_tool_results", "summarize", "tiered"]


async def run_session(strategy: str, **options: object) -> tuple[LongSession, NeuronTurn]:
    session = LongSession(STEPS)
    store = InMemoryStore()
    # An earlier exchange whose first message the user pinned.
    await store.write(
        SessionScope(id="s"),
        "messages",
        [
            {"role": "user", "content": PINNED, "pinned": True},
            {"role": "assistant", "content": "Noted."},
        ],
    )
    turn = NeuronTurn(
        session.provider(),
        tools=ToolRegistry([fetch]),
        context=get_context_strategy(strategy, **options),
        state=store,
        config=NeuronTurnConfig(model="m", max_turns=STEPS + 1, context_limit=LIMIT),
    )
    output = await turn.execute(
        TurnInput(message="Read every page with fetch.", trigger="user", session="s")
    )
    assert output.exit_reason == "complete", output.exit_reason
    assert len(session.calls) == STEPS + 1
    return session, turn


_RUNS: dict[str, LongSession] = {}


@pytest.fixture(params=STRATEGIES)
async def finished(request: pytest.FixtureRequest) -> tuple[str, LongSession]:
    """One 300-step run per strategy, shared by the tests that only read it."""
    strategy: str = request.param
    if strategy not in _RUNS:
        _RUNS[strategy], _ = await run_session(strategy)
    return strategy, _RUNS[strategy]


async def test_no_request_exceeds_the_limit_by_the_models_own_count(
    finished: tuple[str, LongSession],
) -> None:
    strategy, session = finished
    peak = max(true_tokens(r) for r in session.calls)
    assert peak <= LIMIT, f"{strategy}: peak {peak} tokens"


async def test_every_request_is_accepted_by_anthropic_and_openai_rules(
    finished: tuple[str, LongSession],
) -> None:
    strategy, session = finished
    for n, request in enumerate(session.calls):
        assert anthropic_problems(request) == [], f"{strategy}, call {n}"
        assert openai_problems(request) == [], f"{strategy}, call {n}"


async def test_the_pinned_message_is_in_every_request(finished: tuple[str, LongSession]) -> None:
    strategy, session = finished
    missing = [n for n, r in enumerate(session.calls) if PINNED not in context_text(r.messages)]
    assert missing == [], f"{strategy}: pinned message missing from calls {missing[:5]}"


@pytest.mark.parametrize("strategy", ["summarize", "tiered"])
async def test_a_summary_replaces_the_middle_and_the_task_stays(strategy: str) -> None:
    session, _ = await run_session(strategy)
    assert session.summaries
    last = context_text(session.calls[-1].messages)
    assert SUMMARY_PREFIX in last
    assert "Read every page with fetch." in last


async def test_summarize_keeps_the_facts_planted_at_the_start() -> None:
    # tiered clears the early results before it summarises, so there they are
    # gone; bench/context_eval.py reports which strategy keeps what.
    session, _ = await run_session("summarize")
    last = context_text(session.calls[-1].messages)
    for fact in FACTS.values():
        assert fact in last


async def test_tiered_summarises_less_often_than_summarize_alone() -> None:
    alone, _ = await run_session("summarize")
    tiered, _ = await run_session("tiered")
    assert 0 < len(tiered.summaries) < len(alone.summaries)


async def test_summary_calls_count_in_the_turns_cost() -> None:
    session = LongSession(40)
    strategy = Summarize()
    turn = NeuronTurn(
        session.provider(),
        tools=ToolRegistry([fetch]),
        context=strategy,
        config=NeuronTurnConfig(model="m", max_turns=50, context_limit=LIMIT),
    )
    output = await turn.execute(TurnInput(message="Read.", trigger="user"))
    assert strategy.calls == len(session.summaries) > 0
    expected = 0.002 * len(session.calls) + 0.001 * len(session.summaries)
    assert float(output.metadata.cost.amount) == pytest.approx(expected)
    assert output.metadata.turns_used == len(session.calls)
