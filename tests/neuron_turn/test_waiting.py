"""`waiting_calls`: what a paused session waits on now, read from the store.

The lead delegates to the cleaner under `LocalOrchestrator`; the cleaner's
`delete_file` waits for a person, which pauses the lead too. The listing read
from the store is the pause's listing, and stays right when the cleaner is
resumed on its own, where the lead's paused output went stale.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from layer0 import (
    HISTORY_KEY,
    ContextAssemblyError,
    EffectPolicy,
    SessionScope,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_turn import (
    Decision,
    PendingCall,
    pending_approvals,
    resume_input,
    waiting_calls,
)
from neuron_turn.testing import ScriptedProvider, tool_call_response

from ..plugins.orch_local.test_answers import delegate_call
from ..plugins.orch_local.test_delegated_approvals import (
    CLEANERS_SESSION,
    TIDY,
    lead_agent,
    lead_model,
    publishing_lead,
    tidying,
)
from ..plugins.orch_temporal.agents import cleaner_agent, twice_pausing_cleaner


async def test_a_paused_sessions_own_and_delegated_calls_are_listed_as_its_pause_lists_them(
    tmp_path: Path,
) -> None:
    store = InMemoryStore()
    orchestrator, _lead, _published = publishing_lead(store, tmp_path / "tools.log")

    paused = await orchestrator.run("lead", TIDY)

    assert await waiting_calls(store, "s1") == pending_approvals(paused.output)
    assert await waiting_calls(store, "s1") == [
        PendingCall(id="p1", name="publish", input={"text": "tidied"}),
        PendingCall(id="c1/c2", name="delete_file", input={"path": "old.log"}, agent="cleaner"),
    ]
    assert await waiting_calls(store, CLEANERS_SESSION.id) == [
        PendingCall(id="c2", name="delete_file", input={"path": "old.log"})
    ]


async def test_an_agent_resumed_on_its_own_and_paused_again_is_listed_with_its_calls_now(
    tmp_path: Path,
) -> None:
    log, store = tmp_path / "tools.log", InMemoryStore()
    agents = {
        "lead": lead_agent(lead_model("All gone."), store),
        "cleaner": twice_pausing_cleaner(log, store),
    }
    orchestrator = LocalOrchestrator(agents, store, policies={"lead": EffectPolicy.everything()})
    paused = await orchestrator.run("lead", TIDY)
    await orchestrator.run("cleaner", resume_input(CLEANERS_SESSION.id, [Decision.approve("c1")]))

    now = await waiting_calls(store, "s1")
    done = await orchestrator.run("lead", resume_input("s1", [Decision.approve(now[0].id)]))

    # The lead's output still names the cleaner's c1, which ran; the store names what
    # waits now.
    assert [c.id for c in pending_approvals(paused.output)] == ["c1/c1"]
    assert now == [
        PendingCall(id="c1/c2", name="delete_file", input={"path": "b.log"}, agent="cleaner")
    ]
    assert done.output.message.as_text() == "All gone."
    assert log.read_text().splitlines() == ["delete a.log", "delete b.log"]
    assert await waiting_calls(store, "s1") == []


async def test_a_delegated_agents_own_delegated_agent_is_listed_two_levels_down(
    tmp_path: Path,
) -> None:
    store = InMemoryStore()
    manager = ScriptedProvider(
        [tool_call_response(delegate_call("cleaner", "tidy the folder", "m1"))]
    )
    agents = {
        "lead": lead_agent(
            ScriptedProvider([tool_call_response(delegate_call("manager", "get it tidied"))]),
            store,
        ),
        "manager": lead_agent(manager, store),
        "cleaner": cleaner_agent(tmp_path / "tools.log", state=store),
    }
    everything = {name: EffectPolicy.everything() for name in ("lead", "manager")}
    orchestrator = LocalOrchestrator(agents, store, policies=everything)

    paused = await orchestrator.run("lead", TIDY)

    listed = await waiting_calls(store, "s1")
    assert listed == pending_approvals(paused.output)
    assert [(c.id, c.agent) for c in listed] == [("c1/m1/c2", "cleaner")]


async def test_an_agent_that_went_on_to_its_answer_lists_nothing_for_its_parents_call(
    tmp_path: Path,
) -> None:
    _log, store, _lead, orchestrator = tidying(tmp_path, "Went on.")
    await orchestrator.run("lead", TIDY)
    await orchestrator.run("cleaner", resume_input(CLEANERS_SESSION.id, [Decision.approve("c2")]))

    listed = await waiting_calls(store, "s1")
    # The lead's resume takes no decision for it, and gets the cleaner's answer.
    done = await orchestrator.run("lead", resume_input("s1", []))

    assert listed == []
    assert done.output.message.as_text() == "Went on."


async def test_a_session_without_history_or_that_finished_waits_on_nothing(
    tmp_path: Path,
) -> None:
    _log, store, _lead, orchestrator = tidying(tmp_path, "Tidied.")
    await orchestrator.run("lead", TIDY)
    await orchestrator.run("lead", resume_input("s1", [Decision.approve("c1/c2")]))

    assert await waiting_calls(store, "s1") == []
    assert await waiting_calls(store, "never-used") == []


async def test_a_history_that_does_not_parse_is_an_error_naming_its_session() -> None:
    store = InMemoryStore()
    await store.write(SessionScope(id="s1"), HISTORY_KEY, [{"role": "wizard"}])

    with pytest.raises(ContextAssemblyError, match="session 's1'"):
        await waiting_calls(store, "s1")
