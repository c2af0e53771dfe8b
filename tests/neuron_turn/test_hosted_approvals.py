"""A remote MCP server's calls the provider asks about: the turn pauses, a person decides."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import DispatchFailed, TurnOutput
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    Decision,
    HostedCallDecisionError,
    HostedMCP,
    NeuronTurn,
    NeuronTurnConfig,
    PendingCall,
    ProviderResponse,
    ToolResultPart,
    ToolUsePart,
    UnsupportedHostedToolError,
    pending_approvals,
    resume_input,
)
from neuron_turn.loop.hosted_approvals import APPROVED, hosted_call_input
from neuron_turn.loop.hosted_tools import hosted_tool_from_json, hosted_tool_json
from neuron_turn.testing import ScriptedProvider

from ..plugins.orch_local.test_answers import results_sent
from .support import answer, ask, call, calls

RAN: list[str] = []


@tool
async def weather(city: str) -> str:
    """Today's weather in a city (pretend)."""
    RAN.append(city)
    return f"sunny in {city}"


DOCS = HostedMCP("docs", "https://mcp.example.com/mcp", require_approval=["delete_page"])
CONFIG = NeuronTurnConfig(model="m", hosted_tools=[DOCS])
ASKED = ToolUsePart("hosted:mcpr_1", "mcp", hosted_call_input("docs", "delete_page", {"page": 7}))


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def _turn(
    script: list[ProviderResponse], store: SqliteStore, config: NeuronTurnConfig = CONFIG
) -> tuple[LocalOrchestrator, ScriptedProvider]:
    provider = ScriptedProvider(script, hosted_tools=["mcp"], approves_hosted_calls=True)
    turn = NeuronTurn(provider, tools=ToolRegistry([weather]), state=store, config=config)
    return LocalOrchestrator({"a": turn}, store), provider


async def _pause(db: Path, *asks: ToolUsePart, config: NeuronTurnConfig = CONFIG) -> TurnOutput:
    async with SqliteStore(db) as store:
        orchestrator, _ = _turn([calls(call("c1", "weather", city="Oslo"), *asks)], store, config)
        return await orchestrator.dispatch("a", ask("tidy the docs", session="s"))


async def _resume(db: Path, decisions: list[Decision]) -> tuple[TurnOutput, ScriptedProvider]:
    # New objects on the same file: the pause lives in the store, not in memory.
    async with SqliteStore(db) as store:
        orchestrator, provider = _turn([answer("Done.")], store)
        output = await orchestrator.dispatch("a", resume_input("s", decisions))
    return output, provider


async def test_a_hosted_call_the_provider_asks_about_pauses_the_turn_and_is_listed_as_hosted(
    tmp_path: Path,
) -> None:
    output = await _pause(tmp_path / "s.db", ASKED)

    assert output.exit_reason == AWAITING_APPROVAL
    assert pending_approvals(output) == [
        PendingCall(
            id="hosted:mcpr_1",
            name="mcp",
            input={"server": "docs", "tool": "delete_page", "arguments": {"page": 7}},
            hosted=True,
        )
    ]
    assert pending_approvals(output)[0].model_dump(mode="json")["hosted"] is True
    assert RAN == ["Oslo"]  # the free call of the same answer ran


async def test_an_approved_hosted_call_goes_back_to_the_provider_as_approved(
    tmp_path: Path,
) -> None:
    await _pause(tmp_path / "s.db", ASKED)
    done, provider = await _resume(tmp_path / "s.db", [Decision.approve("hosted:mcpr_1")])

    assert done.exit_reason == "complete"
    assert done.message.as_text() == "Done."
    assert results_sent(provider, 1) == [
        ToolResultPart("c1", "sunny in Oslo"),
        ToolResultPart("hosted:mcpr_1", APPROVED),
    ]
    # The request the approval went back in still holds what was asked.
    assert ASKED in provider.requests[0].messages[-2].content
    assert RAN == ["Oslo"]


async def test_a_denied_hosted_call_goes_back_as_a_denial_with_the_reason(tmp_path: Path) -> None:
    await _pause(tmp_path / "s.db", ASKED)
    _, provider = await _resume(
        tmp_path / "s.db", [Decision.deny("hosted:mcpr_1", "keep the page")]
    )

    assert results_sent(provider, 1)[-1] == ToolResultPart(
        "hosted:mcpr_1", "Denied by a person: keep the page", is_error=True
    )


@pytest.mark.parametrize(
    ("decision", "says"),
    [
        (Decision.answer("hosted:mcpr_1", "deleted"), "approve it (Decision.approve) or deny it"),
        (Decision.approve("hosted:mcpr_1", {"page": 8}), "without an edited input"),
        (Decision.approve("hosted:mcpr_1", always=True), "decided one at a time"),
        (Decision.deny("hosted:mcpr_1", "no", always=True), "decided one at a time"),
    ],
)
async def test_a_decision_a_hosted_call_cannot_take_fails_before_anything_and_keeps_the_pause(
    tmp_path: Path, decision: Decision, says: str
) -> None:
    await _pause(tmp_path / "s.db", ASKED)
    with pytest.raises(DispatchFailed) as failed:
        await _resume(tmp_path / "s.db", [decision])
    assert isinstance(failed.value.__cause__, HostedCallDecisionError)
    assert "call 'hosted:mcpr_1' is the remote MCP server 'docs''s" in str(failed.value)
    assert says in str(failed.value)

    done, _ = await _resume(tmp_path / "s.db", [Decision.approve("hosted:mcpr_1")])
    assert done.exit_reason == "complete"


async def test_a_request_the_grant_did_not_ask_for_still_pauses_the_turn(tmp_path: Path) -> None:
    unasked = HostedMCP("docs", "https://mcp.example.com/mcp")
    config = NeuronTurnConfig(model="m", hosted_tools=[unasked])
    output = await _pause(tmp_path / "s.db", ASKED, config=config)

    assert output.exit_reason == AWAITING_APPROVAL
    assert [c.id for c in pending_approvals(output)] == ["hosted:mcpr_1"]


@pytest.mark.parametrize(
    "asked",
    [
        hosted_call_input("wiki", "delete_page", {}),
        {"server": "docs", "tool": "delete_page"},
        {"server": "docs", "tool": 7, "arguments": {}},
        "delete everything",
    ],
)
async def test_a_request_of_a_server_not_granted_or_of_another_shape_is_refused_not_shown(
    tmp_path: Path, asked: JsonValue
) -> None:
    forged = ToolUsePart("hosted:mcpr_9", "mcp", asked)
    async with SqliteStore(tmp_path / "s.db") as store:
        orchestrator, provider = _turn([calls(forged), answer("ok")], store)
        output = await orchestrator.dispatch("a", ask("go", session="s"))

    assert output.exit_reason == "complete"
    assert pending_approvals(output) == []
    [result] = results_sent(provider, 2)
    assert result.is_error and result.tool_use_id == "hosted:mcpr_9"
    assert result.content.startswith("Error:")


async def test_a_function_call_named_mcp_is_no_request_and_is_refused_unrun(
    tmp_path: Path,
) -> None:
    # The model cannot choose a call's id: a request's comes from the provider, prefixed.
    forged = ToolUsePart("call_9", "mcp", hosted_call_input("docs", "delete_page", {"page": 1}))
    async with SqliteStore(tmp_path / "s.db") as store:
        orchestrator, provider = _turn([calls(forged), answer("ok")], store)
        output = await orchestrator.dispatch("a", ask("go", session="s"))

    assert pending_approvals(output) == []
    [result] = results_sent(provider, 2)
    assert result == ToolResultPart(
        "call_9", "Error: mcp is a tool the provider runs; it cannot be called here", is_error=True
    )


async def test_an_approval_policy_holding_every_call_does_not_change_how_a_hosted_one_waits(
    tmp_path: Path,
) -> None:
    config = NeuronTurnConfig(
        model="m", hosted_tools=[DOCS], approval=ApprovalPolicy.of(["weather"])
    )
    output = await _pause(tmp_path / "s.db", ASKED, config=config)

    pending = {c.id: c for c in pending_approvals(output)}
    assert pending["hosted:mcpr_1"].hosted and not pending["c1"].hosted
    assert RAN == []


def test_a_turn_asking_approval_over_a_provider_that_cannot_pause_a_hosted_call_is_refused() -> (
    None
):
    provider = ScriptedProvider([], hosted_tools=["mcp"])
    with pytest.raises(UnsupportedHostedToolError) as refused:
        NeuronTurn(provider, config=CONFIG)
    assert "HostedMCP 'docs' with require_approval" in str(refused.value)
    assert "ScriptedProvider" in str(refused.value)

    # Without require_approval the same provider takes the server.
    plain = NeuronTurnConfig(hosted_tools=[HostedMCP("docs", "https://mcp.example.com/mcp")])
    NeuronTurn(provider, config=plain)


@pytest.mark.parametrize(
    ("asked", "form"),
    [(True, True), (["delete_page", "move_page"], ["delete_page", "move_page"])],
)
def test_require_approval_travels_as_json_and_reads_back_the_same(
    asked: bool | list[str], form: JsonValue
) -> None:
    server = HostedMCP("docs", "https://mcp.example.com/mcp", require_approval=asked)
    data = hosted_tool_json(server)
    assert data["require_approval"] == form
    assert hosted_tool_from_json(data) == server
    assert "require_approval" not in hosted_tool_json(HostedMCP("d", "https://x.example"))


@pytest.mark.parametrize(
    ("asked", "says"),
    [
        ("delete_page", "True, False or a collection of tool names"),
        ([], "names no tool"),
        ([""], "HostedMCP.require_approval must be a non-empty string"),
        (1, "True, False or a collection of tool names"),
        ({"delete_page": True}, "True, False or a collection of tool names"),
    ],
)
def test_require_approval_of_another_shape_is_refused_naming_it(asked: object, says: str) -> None:
    with pytest.raises(UnsupportedHostedToolError) as refused:
        HostedMCP("docs", "https://mcp.example.com/mcp", require_approval=asked)  # type: ignore[arg-type]
    assert says in str(refused.value)


def test_require_approval_of_another_shape_in_json_is_refused_naming_it() -> None:
    data = {"name": "mcp", "label": "d", "url": "https://x.example", "require_approval": "all"}
    with pytest.raises(UnsupportedHostedToolError) as refused:
        hosted_tool_from_json(data)
    assert "require_approval is true, false or a list of tool names" in str(refused.value)
