"""A delegated agent that pauses for approval pauses its parent; the parent's resume resumes it.

The parent (`lead`) delegates to `cleaner`, whose `delete_file` waits for a
person. Under `LocalOrchestrator` the cleaner runs in a session of its own
(`delegation_session`), the lead's pause lists the cleaner's held call as
`c1/c2`, and the lead's resume hands its decision to the cleaner, which goes
on from its pause; its answer is the lead's `delegate` result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from layer0 import (
    HISTORY_KEY,
    Continue,
    DispatchFailed,
    EffectPolicy,
    HookAction,
    HookContext,
    HookPoint,
    LogEffect,
    SessionScope,
    StateStore,
    TurnInput,
)
from layer0.testing import EchoTurn, InMemoryStore
from neuron_hooks import FunctionHook, HookRegistry
from neuron_orch_local import DELEGATION_LOG, FallbackTurn, LocalOrchestrator
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalError,
    ApprovalPolicy,
    AwaitingApprovalError,
    Decision,
    DuplicateDecisionError,
    InvalidEditedInputError,
    MissingDecisionError,
    NeuronTurn,
    NeuronTurnConfig,
    ToolResult,
    ToolResultPart,
    ToolStart,
    ToolUsePart,
    TurnDone,
    TurnEvent,
    UnknownDecisionError,
    delegation_session,
    pending_approvals,
    resume_input,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ..orch_temporal.agents import cleaner_agent, file_tools
from .test_answers import delegate_call, results_sent

TIDY = TurnInput(message="Tidy up", trigger="user", session="s1")
TIDY_TASK = {"agent": "cleaner", "message": "tidy the folder"}
# The lead's first message asks for it: the second of the session's history.
CLEANERS_SESSION = SessionScope(id=delegation_session("s1", 1, TIDY_TASK))


def runs(tool_log: Path) -> list[str]:
    return tool_log.read_text().splitlines() if tool_log.exists() else []


def lead_agent(model: ScriptedProvider, store: StateStore) -> NeuronTurn:
    config = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy.everything())
    return NeuronTurn(model, state=store, config=config)


def lead_model(*after: str) -> ScriptedProvider:
    """Delegates the tidying to `cleaner` (call `c1`), then answers each of `after`."""
    return ScriptedProvider(
        [
            tool_call_response(delegate_call("cleaner", "tidy the folder")),
            *(text_response(text) for text in after),
        ]
    )


def orchestrate(lead: ScriptedProvider, tool_log: Path, store: StateStore) -> LocalOrchestrator:
    agents = {
        "lead": lead_agent(lead, store),
        "cleaner": cleaner_agent(tool_log, state=store),
    }
    policies = {"lead": EffectPolicy.everything()}
    return LocalOrchestrator(agents, store, policies=policies)


def tidying(
    tmp_path: Path, answer: str
) -> tuple[Path, InMemoryStore, ScriptedProvider, LocalOrchestrator]:
    """The lead and the cleaner on one store: its tool log, the store, the lead's model
    (answering `answer` once the cleaner has) and the orchestrator."""
    log, store, lead = tmp_path / "tools.log", InMemoryStore(), lead_model(answer)
    return log, store, lead, orchestrate(lead, log, store)


async def roles(store: StateStore, scope: SessionScope) -> list[str]:
    history = await store.read(scope, HISTORY_KEY)
    assert isinstance(history, list)
    return [str(message["role"]) for message in history if isinstance(message, dict)]


async def test_a_delegated_agent_pausing_pauses_its_parent_whose_resume_resumes_it_once(
    tmp_path: Path,
) -> None:
    log, store, lead, orchestrator = tidying(tmp_path, "Tidied.")

    paused = await orchestrator.run("lead", TIDY)
    ran_while_paused = runs(log)
    asked_while_paused = len(lead.requests)
    done = await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/c2")]))

    assert paused.output.exit_reason == AWAITING_APPROVAL
    [held] = pending_approvals(paused.output)
    assert (held.id, held.name, held.input, held.agent) == (
        "c1/c2",
        "delete_file",
        {"path": "old.log"},
        "cleaner",
    )
    # The cleaner's free call ran; the lead's model waited with the call unanswered.
    assert ran_while_paused == ["read notes.txt"]
    assert asked_while_paused == 1
    assert done.output.exit_reason == "complete"
    assert done.output.message.as_text() == "Tidied."
    assert runs(log) == ["read notes.txt", "delete old.log"]
    assert results_sent(lead, 2) == [
        ToolResultPart("c1", "contents of notes.txt; deleted old.log", is_error=False)
    ]
    assert await roles(store, SessionScope(id="s1")) == ["user", "assistant", "user", "assistant"]
    assert await roles(store, CLEANERS_SESSION) == [
        "user",
        "assistant",
        "user",
        "user",
        "assistant",
    ]
    # Each run records the cleaner's part: paused, then complete.
    records = [
        effect.data[DELEGATION_LOG]
        for output in (paused.output, done.output)
        for effect in output.effects
        if isinstance(effect, LogEffect) and isinstance(effect.data, dict)
        if DELEGATION_LOG in effect.data
    ]
    assert [r["exit_reason"] for r in records if isinstance(r, dict)] == [
        '{"custom": "awaiting_approval"}',
        "complete",
    ]


async def test_a_denied_call_of_a_delegated_agent_does_not_run_and_its_model_reads_why(
    tmp_path: Path,
) -> None:
    log, _store, lead, orchestrator = tidying(tmp_path, "Left it.")

    await orchestrator.run("lead", TIDY)
    deny = resume_input("s1", [Decision.deny("c1/c2", "keep the logs")])
    done = await orchestrator.run("lead", deny)

    assert runs(log) == ["read notes.txt"]
    assert results_sent(lead, 2) == [
        ToolResultPart(
            "c1", "contents of notes.txt; Denied by a person: keep the logs", is_error=False
        )
    ]
    assert done.output.message.as_text() == "Left it."


@pytest.mark.parametrize(
    ("decisions", "error", "message"),
    [
        ([], MissingDecisionError, "without a decision: c1/c2"),
        ([Decision.approve("c1")], UnknownDecisionError, "'c1' is not pending on session 's1'"),
        ([Decision.approve("c1/c9")], UnknownDecisionError, "pending: c1/c2"),
        (
            [Decision.approve("c1/c2"), Decision.deny("c1/c2", "no")],
            DuplicateDecisionError,
            "call 'c1/c2' is decided more than once",
        ),
        (
            [Decision.approve("c1/c2", {"path": 5})],
            InvalidEditedInputError,
            "agent 'cleaner', which call 'c1' waits on, refused the decisions for its calls "
            "(named c1/ID here): the edited input of call 'c2' (delete_file) does not match",
        ),
    ],
    ids=[
        "missing",
        "the-delegation-itself",
        "unknown",
        "twice",
        "edited-input-its-tool-refuses",
    ],
)
async def test_decisions_that_do_not_fit_a_delegated_agents_pause_are_refused_and_nothing_runs(
    tmp_path: Path, decisions: list[Decision], error: type[ApprovalError], message: str
) -> None:
    log, _store, _lead, orchestrator = tidying(tmp_path, "Tidied.")
    await orchestrator.run("lead", TIDY)

    with pytest.raises(DispatchFailed) as refused:
        await orchestrator.run("lead", resume_input("s1", decisions))
    ran_after_refusal = runs(log)
    # Nothing changed: the right decisions still resume both.
    done = await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/c2")]))

    assert isinstance(refused.value.__cause__, error)
    assert message in str(refused.value.__cause__)
    assert ran_after_refusal == ["read notes.txt"]
    assert done.output.message.as_text() == "Tidied."
    assert runs(log) == ["read notes.txt", "delete old.log"]


async def test_a_delegated_agent_of_a_delegated_agent_pausing_pauses_both_and_resumes_both(
    tmp_path: Path,
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    lead = ScriptedProvider(
        [
            tool_call_response(delegate_call("manager", "get it tidied")),
            text_response("Tidied."),
        ]
    )
    manager = ScriptedProvider(
        [
            tool_call_response(delegate_call("cleaner", "tidy the folder", "m1")),
            text_response("the cleaner tidied"),
        ]
    )
    everything = {name: EffectPolicy.everything() for name in ("lead", "manager")}
    agents = {
        "lead": lead_agent(lead, store),
        "manager": lead_agent(manager, store),
        "cleaner": cleaner_agent(log, state=store),
    }
    orchestrator = LocalOrchestrator(agents, store, policies=everything)

    paused = await orchestrator.run("lead", TIDY)
    with pytest.raises(DispatchFailed) as refused:
        await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/m1/c9")]))
    ran_after_refusal = runs(log)
    done = await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/m1/c2")]))

    [held] = pending_approvals(paused.output)
    assert (held.id, held.agent) == ("c1/m1/c2", "cleaner")
    # Checked two levels down, by the manager, before anything ran.
    assert isinstance(refused.value.__cause__, UnknownDecisionError)
    assert "call 'm1/c9' is not pending" in str(refused.value.__cause__)
    assert ran_after_refusal == ["read notes.txt"]
    assert runs(log) == ["read notes.txt", "delete old.log"]
    assert results_sent(manager, 2) == [
        ToolResultPart("m1", "contents of notes.txt; deleted old.log", is_error=False)
    ]
    assert results_sent(lead, 2) == [ToolResultPart("c1", "the cleaner tidied", is_error=False)]
    assert done.output.message.as_text() == "Tidied."


async def test_a_delegation_answered_beside_a_paused_one_is_kept_and_not_run_again(
    tmp_path: Path,
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    lead = ScriptedProvider(
        [
            tool_call_response(
                delegate_call("cleaner", "tidy the folder", "c1"),
                delegate_call("reader", "read the notes", "c2"),
            ),
            text_response("Both done."),
        ]
    )
    reader = ScriptedProvider([text_response("the notes say hi")])
    agents = {
        "lead": lead_agent(lead, store),
        "cleaner": cleaner_agent(log, state=store),
        "reader": lead_agent(reader, store),
    }
    orchestrator = LocalOrchestrator(agents, store, policies={"lead": EffectPolicy.everything()})

    paused = await orchestrator.run("lead", TIDY)
    done = await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/c2")]))

    assert [c.id for c in pending_approvals(paused.output)] == ["c1/c2"]
    assert len(reader.requests) == 1
    # The reader's answer, kept at the pause, and the cleaner's, after it: one message.
    assert results_sent(lead, 2) == [
        ToolResultPart("c2", "the notes say hi", is_error=False),
        ToolResultPart("c1", "contents of notes.txt; deleted old.log", is_error=False),
    ]
    assert done.output.message.as_text() == "Both done."
    assert runs(log) == ["read notes.txt", "delete old.log"]


async def test_a_streamed_pause_of_a_delegated_agent_ends_its_call_unanswered_and_resumes(
    tmp_path: Path,
) -> None:
    _log, _store, _lead, orchestrator = tidying(tmp_path, "Tidied.")

    async with orchestrator.stream("lead", TIDY) as events:
        paused = [(item.agent, item.event) async for item in events]
    approve = resume_input("s1", [Decision.approve("c1/c2")])
    async with orchestrator.stream("lead", approve) as events:
        resumed = [(item.agent, item.event) async for item in events]

    def calls(
        items: list[tuple[str, TurnEvent]], kind: type[ToolStart | ToolResult]
    ) -> list[tuple[str, str]]:
        return [(agent, e.id) for agent, e in items if isinstance(e, kind)]

    assert calls(paused, ToolStart) == [("lead", "c1"), ("cleaner", "c1")]
    assert calls(paused, ToolResult) == [("cleaner", "c1")]  # the lead's call waits
    assert calls(resumed, ToolStart) == [("lead", "c1"), ("cleaner", "c2")]
    assert calls(resumed, ToolResult) == [("cleaner", "c2"), ("lead", "c1")]
    [(_, last)] = [(a, e) for a, e in resumed if isinstance(e, TurnDone) and a == "lead"]
    assert last.output.message.as_text() == "Tidied."


def publishing_lead(
    store: StateStore, tool_log: Path, *answers: str
) -> tuple[LocalOrchestrator, ScriptedProvider, list[str]]:
    """The lead, delegating the tidying (call `c1`) and publishing (`p1`, which waits for a
    person) in one response, then answering each of `answers`, and the cleaner: the
    orchestrator, the lead's model and what was published."""
    published: list[str] = []

    @tool
    async def publish(text: str) -> str:
        """Publish `text`."""
        published.append(text)
        return "published"

    lead = ScriptedProvider(
        [
            tool_call_response(
                delegate_call("cleaner", "tidy the folder"),
                ToolUsePart("p1", "publish", {"text": "tidied"}),
            ),
            *(text_response(answer) for answer in answers),
        ]
    )
    config = NeuronTurnConfig(
        model="scripted",
        effect_policy=EffectPolicy.everything(),
        approval=ApprovalPolicy.of(["publish"]),
    )
    agents = {
        "lead": NeuronTurn(lead, tools=ToolRegistry([publish]), state=store, config=config),
        "cleaner": cleaner_agent(tool_log, state=store),
    }
    policies = {"lead": EffectPolicy.everything()}
    return LocalOrchestrator(agents, store, policies=policies), lead, published


async def test_a_parents_own_held_call_and_its_agents_wait_in_one_pause_decided_together(
    tmp_path: Path,
) -> None:
    store = InMemoryStore()
    answer = "Tidied, not published."
    orchestrator, lead, published = publishing_lead(store, tmp_path / "tools.log", answer)

    paused = await orchestrator.run("lead", TIDY)
    decisions = [Decision.deny("p1", "not yet"), Decision.approve("c1/c2")]
    done = await orchestrator.run("lead", resume_input("s1", decisions))

    assert [(c.id, c.agent) for c in pending_approvals(paused.output)] == [
        ("p1", None),
        ("c1/c2", "cleaner"),
    ]
    assert published == []
    assert sorted(results_sent(lead, 2), key=lambda r: r.tool_use_id) == [
        ToolResultPart("c1", "contents of notes.txt; deleted old.log", is_error=False),
        ToolResultPart("p1", "Denied by a person: not yet", is_error=True),
    ]
    assert done.output.message.as_text() == "Tidied, not published."


async def test_a_new_message_for_a_parent_paused_on_its_agent_names_the_agents_calls(
    tmp_path: Path,
) -> None:
    log, _store, _lead, orchestrator = tidying(tmp_path, "Tidied.")
    await orchestrator.run("lead", TIDY)

    with pytest.raises(DispatchFailed) as refused:
        await orchestrator.run("lead", TIDY)

    assert isinstance(refused.value.__cause__, AwaitingApprovalError)
    assert "is awaiting approval of call(s) c1/c2;" in str(refused.value.__cause__)
    assert runs(log) == ["read notes.txt"]


async def test_a_delegated_agent_pausing_again_pauses_its_parent_again(tmp_path: Path) -> None:
    log, store, lead = tmp_path / "tools.log", InMemoryStore(), lead_model("All gone.")
    cleaner = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("x1", "delete_file", {"path": "a.log"})),
            tool_call_response(ToolUsePart("x2", "delete_file", {"path": "b.log"})),
            text_response("deleted both"),
        ]
    )
    config = NeuronTurnConfig(model="scripted", approval=ApprovalPolicy.of(["delete_*"]))
    agents = {
        "lead": lead_agent(lead, store),
        "cleaner": NeuronTurn(cleaner, tools=file_tools(log), state=store, config=config),
    }
    orchestrator = LocalOrchestrator(agents, store, policies={"lead": EffectPolicy.everything()})

    first = await orchestrator.run("lead", TIDY)
    second = await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/x1")]))
    ran_at_second_pause = runs(log)
    done = await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/x2")]))

    assert [c.id for c in pending_approvals(first.output)] == ["c1/x1"]
    assert [c.id for c in pending_approvals(second.output)] == ["c1/x2"]
    assert ran_at_second_pause == ["delete a.log"]
    assert len(lead.requests) == 2  # asked again only once the cleaner had answered
    assert results_sent(lead, 2) == [ToolResultPart("c1", "deleted both", is_error=False)]
    assert done.output.message.as_text() == "All gone."
    assert runs(log) == ["delete a.log", "delete b.log"]


@pytest.mark.parametrize("reads_history", [True, False], ids=["no-session", "no-state-reader"])
async def test_a_parent_that_could_not_resume_is_told_its_delegated_agent_could_not_wait(
    tmp_path: Path, reads_history: bool
) -> None:
    log, store, lead = tmp_path / "tools.log", InMemoryStore(), lead_model("Could not.")
    config = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy.everything())
    agents = {
        # Its resume would not find a held call, so none is held.
        "lead": NeuronTurn(lead, state=store if reads_history else None, config=config),
        "cleaner": cleaner_agent(log, state=store),
    }
    orchestrator = LocalOrchestrator(agents, store, policies={"lead": EffectPolicy.everything()})
    task = TIDY.model_copy(update={"session": None}) if reads_history else TIDY

    done = await orchestrator.run("lead", task)

    assert done.output.exit_reason == "complete"
    [told] = results_sent(lead, 2)
    assert told.is_error
    assert told.content.startswith("Agent 'cleaner' stopped before finishing: its calls ")
    assert runs(log) == ["read notes.txt"]


async def test_a_delegated_agent_resumed_on_its_own_answers_its_parents_resume_with_its_answer(
    tmp_path: Path,
) -> None:
    log, _store, lead, orchestrator = tidying(tmp_path, "Went on.")
    await orchestrator.run("lead", TIDY)
    alone = resume_input(CLEANERS_SESSION.id, [Decision.approve("c2")])
    await orchestrator.run("cleaner", alone)

    done = await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/c2")]))

    # Not stuck on calls nobody waits on any more, nor run again: the cleaner's answer.
    assert results_sent(lead, 2) == [
        ToolResultPart("c1", "contents of notes.txt; deleted old.log", is_error=False)
    ]
    assert done.output.message.as_text() == "Went on."
    assert runs(log) == ["read notes.txt", "delete old.log"]


async def test_an_edited_input_a_fallback_chains_agent_refuses_fails_the_resume_before_it_runs(
    tmp_path: Path,
) -> None:
    log, store, lead = tmp_path / "tools.log", InMemoryStore(), lead_model("Tidied.")
    chain = FallbackTurn({"first": cleaner_agent(log, state=store), "second": EchoTurn()})
    agents = {"lead": lead_agent(lead, store), "cleaner": chain}
    orchestrator = LocalOrchestrator(agents, store, policies={"lead": EffectPolicy.everything()})
    await orchestrator.run("lead", TIDY)

    edited = [Decision.approve("c1/c2", {"path": 5})]
    with pytest.raises(DispatchFailed) as refused:
        await orchestrator.run("lead", resume_input("s1", edited))

    # Checked with the chain's first model, which the resume goes to.
    assert isinstance(refused.value.__cause__, InvalidEditedInputError)
    assert runs(log) == ["read notes.txt"]


async def test_a_hostile_delegate_call_names_no_other_session_and_still_resumes(
    tmp_path: Path,
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    hostile = "../s2/c1"  # a path, and the id of a call in another session
    lead = ScriptedProvider(
        [
            tool_call_response(delegate_call("cleaner", hostile, hostile)),
            text_response("Tidied."),
        ]
    )
    agents = {"lead": lead_agent(lead, store), "cleaner": cleaner_agent(log, state=store)}
    orchestrator = LocalOrchestrator(agents, store, policies={"lead": EffectPolicy.everything()})

    paused = await orchestrator.run("lead", TIDY)
    held = f"{hostile}/c2"
    done = await orchestrator.run("lead", resume_input("s1", [Decision.approve(held)]))

    assert [c.id for c in pending_approvals(paused.output)] == [held]
    # The cleaner's session is a digest under the lead's: the model's text names none.
    child = delegation_session("s1", 1, {"agent": "cleaner", "message": hostile})
    assert child.startswith("s1/delegate-") and hostile not in child
    assert await roles(store, SessionScope(id=child)) == [
        "user",
        "assistant",
        "user",
        "user",
        "assistant",
    ]
    assert await store.read(SessionScope(id="s2"), HISTORY_KEY) is None
    assert done.output.message.as_text() == "Tidied."
    assert runs(log) == ["read notes.txt", "delete old.log"]


async def test_a_post_tool_use_hook_sees_a_held_delegate_call_once_with_its_answer(
    tmp_path: Path,
) -> None:
    log, store, lead = tmp_path / "tools.log", InMemoryStore(), lead_model("Tidied.")
    seen: list[tuple[str | None, str | None]] = []

    async def note(ctx: HookContext) -> HookAction:
        seen.append((ctx.tool_name, ctx.tool_result))
        return Continue()

    hooks = HookRegistry()
    hooks.add(FunctionHook(note, points=[HookPoint.POST_TOOL_USE]))
    config = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy.everything())
    agents = {
        "lead": NeuronTurn(lead, hooks=hooks, state=store, config=config),
        "cleaner": cleaner_agent(log, state=store),
    }
    orchestrator = LocalOrchestrator(agents, store, policies={"lead": EffectPolicy.everything()})

    await orchestrator.run("lead", TIDY)
    seen_at_the_pause = list(seen)
    await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/c2")]))

    # Held, the call has no result for the hook; resumed, it has its agent's answer.
    assert seen_at_the_pause == []
    assert seen == [("delegate", "contents of notes.txt; deleted old.log")]
