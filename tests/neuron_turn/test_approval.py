"""Tools that need approval: the turn pauses, the store keeps the pause, decisions resume it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    CustomExit,
    DispatchFailed,
    ExitReason,
    SessionScope,
    TurnInput,
    TurnOutput,
)
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    AWAITING_APPROVAL,
    DECISIONS_KEY,
    ApprovalError,
    ApprovalPolicy,
    AwaitingApprovalError,
    Decision,
    DuplicateDecisionError,
    MalformedDecisionsError,
    MissingDecisionError,
    NeuronTurn,
    NeuronTurnConfig,
    NotAwaitingApprovalError,
    PendingCall,
    ProviderResponse,
    ToolResultPart,
    UnknownDecisionError,
    pending_approvals,
    resume_input,
)
from neuron_turn.testing import ScriptedProvider

from .support import answer, ask, call, calls

RAN: list[tuple[str, JsonValue]] = []


@tool
async def read_file(path: str) -> str:
    """Read a file (pretend)."""
    RAN.append(("read_file", path))
    return f"contents of {path}"


@tool
async def shell(command: str) -> str:
    """Run a shell command (pretend)."""
    RAN.append(("shell", command))
    return f"ran {command}"


CONFIG = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["shell"]))
TWO_CALLS = calls(call("c1", "read_file", path="a.txt"), call("c2", "shell", command="ls"))


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def _turn(
    script: list[ProviderResponse], store: SqliteStore, config: NeuronTurnConfig = CONFIG
) -> tuple[NeuronTurn, ScriptedProvider]:
    provider = ScriptedProvider(script)
    tools = ToolRegistry([read_file, shell])
    return NeuronTurn(provider, tools=tools, state=store, config=config), provider


async def _pause(db: Path) -> TurnOutput:
    async with SqliteStore(db) as store:
        turn, _ = _turn([TWO_CALLS], store)
        output = await LocalOrchestrator({"a": turn}, store).dispatch("a", ask("look", session="s"))
    return output


async def _resume(
    db: Path, decisions: list[Decision], then: str = "done"
) -> tuple[TurnOutput, ScriptedProvider]:
    # New store and orchestrator objects on the same file: nothing lives in memory.
    async with SqliteStore(db) as store:
        turn, provider = _turn([answer(then)], store)
        output = await LocalOrchestrator({"a": turn}, store).dispatch(
            "a", resume_input("s", decisions)
        )
    return output, provider


def _results(provider: ScriptedProvider) -> list[ToolResultPart]:
    last = provider.requests[0].messages[-1]
    assert last.role == "user"
    assert all(isinstance(p, ToolResultPart) for p in last.content)
    return list(last.content)  # type: ignore[arg-type]


async def test_the_free_call_runs_and_the_held_one_waits_in_the_output_and_the_store(
    tmp_path: Path,
) -> None:
    output = await _pause(tmp_path / "s.db")
    assert output.exit_reason == AWAITING_APPROVAL
    assert output.model_dump(mode="json")["exit_reason"] == {"custom": "awaiting_approval"}
    assert pending_approvals(output) == [
        PendingCall(id="c2", name="shell", input={"command": "ls"})
    ]
    assert RAN == [("read_file", "a.txt")]
    async with SqliteStore(tmp_path / "s.db") as store:
        history = await store.read(SessionScope(id="s"), HISTORY_KEY)
    assert isinstance(history, list)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]  # type: ignore[index,call-overload]
    assert "contents of a.txt" in str(history[2])
    assert "ran ls" not in str(history)


async def test_approve_runs_the_call_then_calls_the_model_with_every_result(tmp_path: Path) -> None:
    await _pause(tmp_path / "s.db")
    output, provider = await _resume(tmp_path / "s.db", [Decision.approve("c2")])
    assert output.exit_reason == "complete"
    assert RAN == [("read_file", "a.txt"), ("shell", "ls")]
    results = _results(provider)
    # Both results reach the model in one message after the assistant's tool calls.
    assert [(r.tool_use_id, r.content, r.is_error) for r in results] == [
        ("c1", "contents of a.txt", False),
        ("c2", "ran ls", False),
    ]
    assert provider.requests[0].messages[-2].role == "assistant"
    assert "metadata" not in provider.requests[0].extra


async def test_approve_with_edited_input_runs_the_edited_call(tmp_path: Path) -> None:
    await _pause(tmp_path / "s.db")
    decision = Decision.approve("c2", {"command": "ls -la"})
    _, provider = await _resume(tmp_path / "s.db", [decision])
    assert RAN[-1] == ("shell", "ls -la")
    assert _results(provider)[-1].content == "ran ls -la"


async def test_deny_runs_nothing_and_the_model_sees_the_reason(tmp_path: Path) -> None:
    await _pause(tmp_path / "s.db")
    output, provider = await _resume(tmp_path / "s.db", [Decision.deny("c2", "not on prod")])
    assert output.exit_reason == "complete"
    assert RAN == [("read_file", "a.txt")]
    denied = _results(provider)[-1]
    assert denied.is_error and "not on prod" in denied.content
    # The resumed session holds a complete exchange: a new message may follow.
    async with SqliteStore(tmp_path / "s.db") as store:
        turn, _ = _turn([answer("again")], store)
        later = await LocalOrchestrator({"a": turn}, store).dispatch("a", ask("next", session="s"))
    assert later.exit_reason == "complete"


@pytest.mark.parametrize(
    ("decisions", "error", "message"),
    [
        ([], MissingDecisionError, "without a decision: c2"),
        (
            [Decision.approve("c2"), Decision.approve("c9")],
            UnknownDecisionError,
            "'c9' is not pending",
        ),
        ([Decision.approve("c2"), Decision.deny("c2", "no")], DuplicateDecisionError, "'c2'"),
    ],
)
async def test_a_bad_resume_fails_before_anything_runs(
    tmp_path: Path, decisions: list[Decision], error: type[ApprovalError], message: str
) -> None:
    await _pause(tmp_path / "s.db")
    with pytest.raises(DispatchFailed) as raised:
        await _resume(tmp_path / "s.db", decisions)
    assert isinstance(raised.value.__cause__, error)
    assert message in str(raised.value.__cause__)
    assert RAN == [("read_file", "a.txt")]


async def test_malformed_decisions_are_refused_with_what_is_wrong() -> None:
    turn = NeuronTurn(ScriptedProvider([]), config=CONFIG)
    bad = TurnInput(
        message="", trigger="user", session="s", metadata={DECISIONS_KEY: [{"id": "c2"}]}
    )
    with pytest.raises(MalformedDecisionsError, match="decision"):
        await turn.execute(bad)
    with pytest.raises(MalformedDecisionsError, match="must be a list"):
        await turn.execute(bad.model_copy(update={"metadata": {DECISIONS_KEY: "yes"}}))


async def test_decisions_for_a_session_not_paused_are_an_error(tmp_path: Path) -> None:
    async with SqliteStore(tmp_path / "s.db") as store:
        turn, _ = _turn([], store)
        with pytest.raises(NotAwaitingApprovalError, match="not awaiting approval"):
            await turn.execute(resume_input("s", [Decision.approve("c2")]))


async def test_a_new_message_on_a_paused_session_is_refused(tmp_path: Path) -> None:
    await _pause(tmp_path / "s.db")
    async with SqliteStore(tmp_path / "s.db") as store:
        turn, provider = _turn([answer("x")], store)
        with pytest.raises(AwaitingApprovalError, match="c2"):
            await turn.execute(ask("hello?", session="s"))
    assert provider.requests == []


async def test_a_predicate_over_the_input_and_patterns_select_calls() -> None:
    def outside(name: str, input: JsonValue) -> bool:
        return isinstance(input, dict) and not str(input.get("path", "")).startswith("ws/")

    policy = ApprovalPolicy.of(["sh*"], predicate=outside)
    assert policy.requires("shell", {"command": "ls"})
    assert policy.requires("read_file", {"path": "/etc/passwd"})
    assert not policy.requires("read_file", {"path": "ws/a.txt"})


async def test_effect_tools_can_need_approval() -> None:
    config = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["write_memory"]))
    script = [calls(call("m1", "write_memory", key="k", value="v"))]
    turn = NeuronTurn(ScriptedProvider(script), config=config)
    output = await turn.execute(ask("remember", session="s"))
    reason: ExitReason = CustomExit(name="awaiting_approval")
    assert output.exit_reason == reason
    assert [p.name for p in pending_approvals(output)] == ["write_memory"]
    assert not any(getattr(e, "type", None) == "write_memory" for e in output.effects)
