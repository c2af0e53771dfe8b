"""Tools that need approval: the turn pauses, the store keeps the pause, decisions resume it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    InvalidEditedInputError,
    MalformedDecisionsError,
    MissingDecisionError,
    NeuronTurn,
    NeuronTurnConfig,
    NotAwaitingApprovalError,
    PendingCall,
    PluginManager,
    ProviderResponse,
    RegisterApprovalPolicy,
    ToolResultPart,
    UnknownDecisionError,
    hookimpl,
    pending_approvals,
    resume_input,
)
from neuron_turn.loop._nesting import MAX_INPUT_DEPTH
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


def _nested(depth: int) -> JsonValue:
    value: JsonValue = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("edited", "message"),
    [
        ({"command": _nested(MAX_INPUT_DEPTH + 1)}, "nests deeper than 64 levels"),
        ({"command": ["ls"]}, "does not match the tool's schema"),
        ({"cmd": "ls"}, "does not match the tool's schema"),
    ],
    ids=["too-deep", "wrong-type", "missing-field"],
)
async def test_an_edited_input_meets_the_checks_of_a_models_input_before_anything_runs(
    tmp_path: Path, edited: JsonValue, message: str
) -> None:
    await _pause(tmp_path / "s.db")
    with pytest.raises(DispatchFailed) as raised:
        await _resume(tmp_path / "s.db", [Decision.approve("c2", edited)])
    error = raised.value.__cause__
    assert isinstance(error, InvalidEditedInputError)
    assert "the edited input of call 'c2' (shell)" in str(error) and message in str(error)
    assert RAN == [("read_file", "a.txt")]
    # Nothing was recorded: the same pause takes a good decision.
    output, _ = await _resume(tmp_path / "s.db", [Decision.approve("c2", {"command": "pwd"})])
    assert output.exit_reason == "complete"
    assert RAN[-1] == ("shell", "pwd")


async def test_a_predicate_that_raises_holds_the_call(caplog: pytest.LogCaptureFixture) -> None:
    def fragile(name: str, input: JsonValue) -> bool:
        return str(input["path"]).startswith("/")  # type: ignore[index,call-overload]

    policy = ApprovalPolicy.of(predicate=fragile)
    assert policy.requires("read_file", {"path": "/etc"})
    assert not policy.requires("read_file", {"path": "ws/a"})
    assert policy.requires("read_file", {"no_path": 1})  # KeyError: held, not crashed
    [record] = [r for r in caplog.records if "approval predicate raised" in r.getMessage()]
    assert "'read_file'" in record.getMessage() and record.exc_info is not None


def test_combined_policies_hold_what_any_of_them_holds() -> None:
    by_name = ApprovalPolicy.of(["shell"])
    by_input = ApprovalPolicy.of(predicate=lambda name, input: input == {"path": "/"})
    other = ApprovalPolicy.of(["rm_*"], predicate=lambda name, input: name == "curl")
    combined = ApprovalPolicy.combine(by_name, None, by_input, other)
    assert combined is not None
    assert combined.tools == frozenset({"shell", "rm_*"})
    assert combined.requires("shell", {})
    assert combined.requires("rm_rf", {})
    assert combined.requires("read_file", {"path": "/"})
    assert combined.requires("curl", {})
    assert not combined.requires("read_file", {"path": "a"})
    assert ApprovalPolicy.combine(None, None) is None
    assert ApprovalPolicy.combine(by_name) is by_name


async def test_from_plugins_joins_the_plugins_policies_to_the_configs() -> None:
    class HoldsReadFile:
        @hookimpl
        def register_approval_policies(self, register: RegisterApprovalPolicy) -> None:
            register(ApprovalPolicy.of(["read_file"]))

    manager = PluginManager()
    manager.register(HoldsReadFile(), name="holds")
    turn = NeuronTurn.from_plugins(
        model="scripted:m",
        tools=[read_file, shell],
        plugins=_WithScripted(manager, [TWO_CALLS]),
        config=CONFIG,
        context=None,
    )
    output = await turn.execute(ask("look", session="s"))
    assert [p.id for p in pending_approvals(output)] == ["c1", "c2"]
    assert RAN == []


class _WithScripted:
    """A plugin manager whose `scripted` provider answers by script."""

    def __init__(self, manager: PluginManager, script: list[ProviderResponse]) -> None:
        self.manager = manager
        self.script = script

    def get_provider(self, model: str, /, **options: object) -> ScriptedProvider:
        return ScriptedProvider(self.script)

    def __getattr__(self, name: str) -> object:
        return getattr(self.manager, name)


_FRESH_PROCESS = """
import asyncio, sys
from pathlib import Path
from tests.neuron_turn.test_approval import RAN, _resume
from neuron_turn import Decision

output, provider = asyncio.run(_resume(Path(sys.argv[1]), [Decision.approve("c2")]))
print(output.exit_reason, RAN, provider.requests[0].messages[-1].content[-1].content)
"""


async def test_a_new_process_resumes_from_the_sqlite_file(tmp_path: Path) -> None:
    await _pause(tmp_path / "s.db")
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _FRESH_PROCESS, str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "complete [('shell', 'ls')] ran ls\n"


VECTORS = Path(__file__).resolve().parents[3] / "shared" / "layer0-vectors"


def _reference(type_name: str, name: str) -> Any:
    vectors = json.loads((VECTORS / f"{type_name}.json").read_text(encoding="utf-8"))
    (vector,) = [v for v in vectors if v["name"] == name]
    return vector["json"]


def _shape(value: Any) -> Any:
    """Keys kept in order, every scalar replaced by its type: the form, not the content."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return ["list"]
    return type(value).__name__


async def test_the_pause_and_the_resume_use_forms_of_the_rust_reference_vectors(
    tmp_path: Path,
) -> None:
    wire: Any = (await _pause(tmp_path / "s.db")).model_dump(mode="json")
    assert _shape(wire["exit_reason"]) == _shape(_reference("ExitReason", "custom"))
    (log,) = [e for e in wire["effects"] if e["type"] == "log"]
    reference_log = _reference("Effect", "log_with_data")
    # Same keys in the same order, scalars of the same types; `data` is any JSON there.
    assert _shape({**log, "data": None}) == _shape({**reference_log, "data": None})
    assert log["level"] == _reference("LogLevel", "info")
    resume: Any = resume_input("s", [Decision.approve("c2")]).model_dump(mode="json")
    assert list(resume) == list(_reference("TurnInput", "metadata_object"))
    assert resume["metadata"]["approval_decisions"] == [
        {"id": "c2", "decision": "approve", "input": None, "reason": ""}
    ]


async def test_an_approved_effect_tool_call_declares_its_effect_on_resume(tmp_path: Path) -> None:
    config = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["write_memory"]))
    script = [calls(call("m1", "write_memory", key="k", value="v"))]
    async with SqliteStore(tmp_path / "s.db") as store:
        turn = NeuronTurn(ScriptedProvider(script), state=store, config=config)
        paused = await LocalOrchestrator({"a": turn}, store).dispatch("a", ask("keep", session="s"))
        assert paused.exit_reason == AWAITING_APPROVAL
        assert await store.read(SessionScope(id="s"), "k") is None
        turn = NeuronTurn(ScriptedProvider([answer("kept")]), state=store, config=config)
        done = await LocalOrchestrator({"a": turn}, store).dispatch(
            "a", resume_input("s", [Decision.approve("m1")])
        )
        assert done.exit_reason == "complete"
        assert await store.read(SessionScope(id="s"), "k") == "v"


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (
            {"id": "c2", "decision": "approve", "reason": "fine"},
            "a reason is for a denial only, not 'approve'",
        ),
        (
            {"id": "c2", "decision": "deny", "input": {"command": "ls"}},
            "an edited input is for an approval only, not 'deny'",
        ),
        ({"id": "c2", "decision": "approve", "resaon": "typo"}, "resaon"),
        ({"id": "c2", "decision": "deny", "reason": "x", "output": 1}, "for an answer only"),
        ({"id": "c2", "decision": "approve", "is_error": True}, "for an answer only"),
        ({"id": "c2", "decision": "answer", "output": 1, "always": True}, "always is for"),
    ],
)
async def test_a_decision_with_a_field_it_would_drop_is_refused(
    tmp_path: Path, decision: dict[str, JsonValue], message: str
) -> None:
    await _pause(tmp_path / "s.db")
    async with SqliteStore(tmp_path / "s.db") as store:
        turn, _ = _turn([answer("x")], store)
        metadata: JsonValue = {DECISIONS_KEY: [decision]}
        bad = TurnInput(message="", trigger="user", session="s", metadata=metadata)
        with pytest.raises(MalformedDecisionsError, match=message):
            await turn.execute(bad)
    assert RAN == [("read_file", "a.txt")]


async def test_two_calls_sharing_an_id_are_held_and_decided_apart(tmp_path: Path) -> None:
    # A hostile model (or a server numbering every call alike) gives a held call the id
    # of a free one: the free call's result must not answer it, nor a decision both.
    shared = calls(call("c1", "read_file", path="a.txt"), call("c1", "shell", command="rm -r /"))
    async with SqliteStore(tmp_path / "s.db") as store:
        turn, _ = _turn([shared], store)
        paused = await LocalOrchestrator({"a": turn}, store).dispatch("a", ask("look", session="s"))
    assert pending_approvals(paused) == [
        PendingCall(id="c1_1", name="shell", input={"command": "rm -r /"})
    ]
    assert RAN == [("read_file", "a.txt")]

    output, provider = await _resume(tmp_path / "s.db", [Decision.deny("c1_1", "no")])
    assert output.exit_reason == "complete"
    assert RAN == [("read_file", "a.txt")]
    sent = provider.requests[0].messages
    assert [p.id for p in sent[-2].content] == ["c1", "c1_1"]  # type: ignore[union-attr]
    assert [(r.tool_use_id, r.is_error) for r in _results(provider)] == [
        ("c1", False),
        ("c1_1", True),
    ]
