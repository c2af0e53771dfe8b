"""An orchestrator answering effect-tool calls while the turn waits (`neuron_turn.answering`)."""

from __future__ import annotations

from layer0 import (
    HISTORY_KEY,
    DelegateEffect,
    Effect,
    HookPoint,
    LogEffect,
    LogLevel,
    SessionScope,
    SkipTool,
    WriteMemoryEffect,
    usd,
)
from layer0.testing import InMemoryStore, RecordingHook
from neuron_hooks import HookRegistry
from neuron_turn import (
    EffectAnswer,
    ToolResultPart,
    ToolUsePart,
    answering,
    delegation_session,
    delegation_sessions,
)

from .support import TRUSTING, answer, appended, ask, build, call, calls, dollars

RECORD = LogEffect(level=LogLevel.INFO, message="ran it", data=None)


class Answerer:
    """Answers delegations with a fixed text and cost; leaves other effects alone."""

    def __init__(self) -> None:
        self.seen: list[Effect] = []

    async def __call__(self, effect: Effect) -> EffectAnswer | None:
        self.seen.append(effect)
        if not isinstance(effect, DelegateEffect):
            return None
        return EffectAnswer(
            text=f"{effect.agent} says 42",
            effects=(RECORD,),
            tokens_in=7,
            tokens_out=3,
            cost=usd("0.25"),
        )


def results(request_messages: object) -> list[ToolResultPart]:
    last = request_messages[-1]  # type: ignore[index]
    return [p for p in last.content if isinstance(p, ToolResultPart)]


async def test_an_answered_effect_is_the_tool_result_and_its_totals_are_added() -> None:
    turn, provider = build(
        [calls(call("c1", "delegate", agent="calc", message="6 * 7"), cost="0.5"), answer("42")],
        config=TRUSTING,
    )
    answerer = Answerer()

    with answering(answerer):
        output = await turn.execute(ask())

    assert results(provider.requests[1].messages) == [ToolResultPart("c1", "calc says 42")]
    assert output.effects == [RECORD]  # the record stands for the delegation carried out
    assert (output.metadata.tokens_in, output.metadata.tokens_out) == (27, 13)
    assert output.metadata.cost == dollars("0.75")


async def test_effects_the_answerer_leaves_alone_are_declared_as_usual() -> None:
    turn, provider = build(
        [calls(call("c1", "write_memory", scope="global", key="k", value=1)), answer("ok")],
        config=TRUSTING,
    )
    with answering(Answerer()):
        output = await turn.execute(ask())
    assert results(provider.requests[1].messages) == [ToolResultPart("c1", "Memory written.")]
    assert output.effects == [WriteMemoryEffect(scope="global", key="k", value=1)]


async def test_an_error_answer_is_a_tool_error() -> None:
    async def refuse(effect: Effect) -> EffectAnswer:
        return EffectAnswer(text="Error: no such agent", is_error=True)

    turn, provider = build(
        [calls(call("c1", "delegate", agent="ghost", message="x")), answer("ok")], config=TRUSTING
    )
    with answering(refuse):
        output = await turn.execute(ask())
    assert results(provider.requests[1].messages) == [
        ToolResultPart("c1", "Error: no such agent", is_error=True)
    ]
    assert output.effects == []
    assert [c.success for c in output.metadata.tools_called] == [False]


async def test_a_call_a_hook_skips_never_reaches_the_answerer() -> None:
    hooks = HookRegistry()
    hooks.add(RecordingHook({HookPoint.PRE_TOOL_USE}, action=SkipTool(reason="not now")))
    turn, _ = build(
        [calls(call("c1", "delegate", agent="calc", message="x")), answer("ok")],
        config=TRUSTING,
        hooks=hooks,
    )
    answerer = Answerer()
    with answering(answerer):
        await turn.execute(ask())
    assert answerer.seen == []


async def test_without_an_answerer_a_delegation_is_only_declared() -> None:
    turn, provider = build(
        [calls(call("c1", "delegate", agent="calc", message="x")), answer("ok")], config=TRUSTING
    )
    output = await turn.execute(ask())
    assert results(provider.requests[1].messages) == [ToolResultPart("c1", "Delegation requested.")]
    assert isinstance(output.effects[0], DelegateEffect)


def delegation_sessions_given(answerer: Answerer) -> list[str | None]:
    return [e.input.session for e in answerer.seen if isinstance(e, DelegateEffect)]


async def test_a_delegation_runs_in_a_session_named_by_its_place_and_task_not_its_call_id() -> None:
    # The same turn run twice on the same history, as a worker re-runs a lost
    # attempt: its model names the calls anew, and orders them otherwise.
    first = [
        call("c1", "delegate", agent="calc", message="6 * 7"),
        call("c2", "delegate", agent="calc", message="6 * 7"),
        call("c3", "delegate", agent="calc", message="1 + 1"),
    ]
    again = [
        call("x9", "delegate", agent="calc", message="1 + 1"),
        call("x7", "delegate", agent="calc", message="6 * 7"),
        call("x8", "delegate", agent="calc", message="6 * 7"),
    ]
    given: list[list[str | None]] = []
    for parts in (first, again):
        store = InMemoryStore()
        turn, _ = build([calls(*parts), answer("done")], state=store, config=TRUSTING)
        answerer = Answerer()
        with answering(answerer):
            await turn.execute(ask(session="s1"))
        given.append(delegation_sessions_given(answerer))

    six, six_again, two = (
        delegation_session("s1", 1, p.input, n) for p, n in zip(first, (0, 1, 0), strict=True)
    )
    assert given[0] == [six, six_again, two]
    assert given[1] == [two, six, six_again]
    assert len({six, six_again, two}) == 3  # the same task asked twice runs twice
    assert all(s.startswith("s1/delegate-") for s in (six, six_again, two))


async def test_a_delegation_later_in_the_session_runs_in_a_session_of_its_own() -> None:
    store = InMemoryStore()
    task = call("c1", "delegate", agent="calc", message="6 * 7")
    turn, _ = build(
        [calls(task), answer("42"), calls(task), answer("42 again")], state=store, config=TRUSTING
    )
    answerer = Answerer()
    with answering(answerer):
        first = await turn.execute(ask(session="s1"))
        await store.write(SessionScope(id="s1"), HISTORY_KEY, appended(first).messages)
        await turn.execute(ask("once more", session="s1"))

    # user, assistant (the call), user (its result), assistant; then the second turn's.
    assert delegation_sessions_given(answerer) == [
        delegation_session("s1", 1, task.input),
        delegation_session("s1", 5, task.input),
    ]
    assert delegation_sessions("s1", 5, [task, ToolUsePart("c2", "echo", task.input)]) == {
        "c1": delegation_session("s1", 5, task.input)
    }
