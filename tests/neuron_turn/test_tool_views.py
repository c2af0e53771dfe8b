"""A turn offers a view's tools as shaped: renamed, prefixed or filtered, the tools unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import (
    RunContext,
    ToolDyn,
    filtered_tools,
    prefixed_tools,
    renamed_tools,
    tool,
    tool_source,
)
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    Decision,
    NeuronTurn,
    NeuronTurnConfig,
    ToolResultPart,
    pending_approvals,
    resume_input,
)
from neuron_turn.testing import ScriptedProvider

from .support import answer, ask, call, calls


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def ban(user: str) -> str:
    """Ban a user."""
    return f"banned {user}"


@tool_source
def staff(ctx: RunContext[Any]) -> list[ToolDyn]:
    return [add, ban]


def _results(provider: ScriptedProvider, request: int) -> list[ToolResultPart]:
    parts = provider.requests[request].messages[-1].content
    return [p for p in parts if isinstance(p, ToolResultPart)]


async def test_the_model_calls_a_renamed_tool_by_its_new_name_and_never_by_its_own() -> None:
    provider = ScriptedProvider(
        [calls(call("c1", "plus", a=2, b=3), call("c2", "add", a=1, b=1)), answer("5")]
    )
    turn = NeuronTurn(provider, tools=renamed_tools([add], {"plus": "add"}), config=None)

    await turn.execute(ask("2+3"))

    assert [t.name for t in provider.requests[0].tools] == ["plus"]
    plus, own = _results(provider, 1)
    assert plus.content == "5" and not plus.is_error
    assert own.is_error and "'add'" in own.content  # the old name is no way in


async def test_a_filtered_out_tool_is_neither_offered_nor_run_when_the_model_guesses_it() -> None:
    provider = ScriptedProvider([calls(call("c1", "ban", user="mallory")), answer("no")])
    turn = NeuronTurn(provider, tools=[filtered_tools(staff, block=["ban"])])

    await turn.execute(ask())

    assert [t.name for t in provider.requests[0].tools] == ["add"]
    (refused,) = _results(provider, 1)
    assert refused.is_error and "banned" not in refused.content


async def test_filtered_where_sees_each_runs_deps() -> None:
    def admins_only(ctx: RunContext[dict[str, bool]], tool: ToolDyn) -> bool:
        return tool.name != "ban" or ctx.deps["admin"]

    provider = ScriptedProvider([answer("a"), answer("b")])
    turn = NeuronTurn(provider, tools=[filtered_tools(staff, where=admins_only)])

    await turn.execute(ask(), deps={"admin": True})
    await turn.execute(ask(), deps={"admin": False})

    assert [[t.name for t in r.tools] for r in provider.requests] == [["add", "ban"], ["add"]]


async def test_approval_names_a_prefixed_tool_by_the_name_the_model_sees_and_resumes_it(
    tmp_path: Path,
) -> None:
    config = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["staff_ban"]))
    async with SqliteStore(tmp_path / "s.db") as store:
        provider = ScriptedProvider([calls(call("c1", "staff_ban", user="mallory")), answer("ok")])
        turn = NeuronTurn(
            provider, tools=[prefixed_tools(staff, "staff_")], state=store, config=config
        )
        orchestrator = LocalOrchestrator({"a": turn}, store)

        paused = await orchestrator.dispatch("a", ask("ban mallory", session="s"))
        (pending,) = pending_approvals(paused)
        done = await orchestrator.dispatch("a", resume_input("s", [Decision.approve("c1")]))

    assert paused.exit_reason == AWAITING_APPROVAL and pending.name == "staff_ban"
    assert done.exit_reason == "complete"
    (ran,) = _results(provider, 1)
    assert ran.content == "banned mallory" and not ran.is_error
