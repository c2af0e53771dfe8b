"""The child-process environment, with real processes: limits, crashes, cleanup, secrets."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import pytest

from layer0 import (
    CredentialRef,
    EnvironmentSpec,
    EnvVarInjection,
    NetworkAction,
    NetworkPolicy,
    RetryableError,
    SessionScope,
    TurnInput,
)
from neuron_env_sandbox import (
    ChildFailedError,
    IsolationRequiredError,
    LimitExceededError,
    MissingCredentialError,
    ProcessEnvironment,
    ProcessLimits,
    StaticCredentials,
    UnsupportedSpecError,
)
from neuron_state_sqlite import SqliteStore
from neuron_turn import (
    AWAITING_APPROVAL,
    INTERRUPTED,
    CodeExecution,
    HostedMCP,
    PendingCall,
    RateLimitError,
    ToolUsePart,
    UnsupportedHostedToolError,
    UnsupportedStrictToolsError,
    UnsupportedThinkingError,
    WebSearch,
    carried_counts,
    pending_approvals,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._helpers import RECIPE, call_tool, running, scripted


async def test_the_child_sees_only_the_variables_it_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NEURON_TEST_SECRET", "hunter2")
    hidden = await call_tool(ProcessEnvironment, "read_env", {"name": "NEURON_TEST_SECRET"})
    assert hidden.result.content == "<unset>"
    given = await call_tool(ProcessEnvironment, "read_env", {"name": "MODE"}, env={"MODE": "test"})
    assert given.result.content == "test"


async def test_a_credential_resolves_in_the_parent_and_never_shows_in_errors() -> None:
    spec = EnvironmentSpec(
        credentials=[CredentialRef(name="db", injection=EnvVarInjection(var_name="DB_PASSWORD"))]
    )
    with pytest.raises(MissingCredentialError, match="credential 'db'"):
        await call_tool(ProcessEnvironment, "read_env", {"name": "DB_PASSWORD"}, spec=spec)
    limits = ProcessLimits(cpu_seconds=1, processes=None)
    with pytest.raises(LimitExceededError) as caught:
        await call_tool(
            ProcessEnvironment,
            "spin",
            {},
            spec=spec,
            limits=limits,
            credentials=StaticCredentials({"db": "pa55word"}),
        )
    assert "pa55word" not in str(caught.value)


async def test_a_crash_in_the_child_is_a_clear_error_and_the_store_is_intact(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    scope = SessionScope(id="s1")
    history = [{"role": "user", "content": [{"type": "text", "text": "earlier"}]}]
    async with SqliteStore(path) as store:
        await store.write(scope, "messages", history)
        with pytest.raises(ChildFailedError, match="killed by SIGKILL"):
            await call_tool(ProcessEnvironment, "crash", {}, session="s1", state=store)
        assert await store.read(scope, "messages") == history
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_the_child_reads_its_sessions_history_through_the_parent(tmp_path: Path) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        await store.write(SessionScope(id="s1"), "messages", [])
        call = await call_tool(
            ProcessEnvironment, "read_env", {"name": "X"}, session="s1", state=store
        )
    # The turn's messages are declared as an effect, for the orchestrator to append.
    assert [effect.type for effect in call.output.effects] == ["custom"]
    assert call.output.effects[0].effect_type == "append_history"  # type: ignore[union-attr]


async def test_a_turn_failing_after_its_tool_ran_in_the_child_hands_back_what_it_did(
    tmp_path: Path,
) -> None:
    call = ToolUsePart(id="call-1", name="read_env", input={"name": "MODE"})
    limited = RateLimitError("429 slow down", provider="scripted", retry_after=3.0)
    provider = ScriptedProvider([tool_call_response(call), limited])
    recipe = RECIPE.model_copy(update={"tools": ("read_env",)})
    async with SqliteStore(tmp_path / "state.db") as store:
        environment = ProcessEnvironment(recipe, provider=provider, state=store)
        turn_input = TurnInput(message="go", trigger="user", session="s1")
        with pytest.raises(RetryableError) as caught:
            await environment.run(turn_input, EnvironmentSpec())

    # The orchestrator in the parent can keep the part the child did and continue it.
    assert caught.value.retry_after == 3.0
    partial = caught.value.partial
    assert partial is not None and partial.output.exit_reason == INTERRUPTED
    assert [t.name for t in partial.output.metadata.tools_called] == ["read_env"]
    assert partial.continuation.session == "s1"
    counts = carried_counts(partial.continuation.metadata)
    assert counts is not None and counts.last_call == ("read_env", {"name": "MODE"})


async def test_a_detached_grandchild_does_not_outlive_a_cancelled_run() -> None:
    started: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def receive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        started.set_result(int(await reader.readline()))
        writer.close()

    server = await asyncio.start_server(receive, "127.0.0.1", 0)
    async with server:
        port = server.sockets[0].getsockname()[1]
        limits = ProcessLimits(processes=None)
        run = asyncio.create_task(
            call_tool(ProcessEnvironment, "hang", {"port": port}, limits=limits)
        )
        sleeper = await started
        assert running(sleeper)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    assert not running(sleeper)


async def test_a_turn_past_its_wall_clock_is_stopped() -> None:
    limits = ProcessLimits(wall_clock_seconds=1, processes=None)
    with pytest.raises(LimitExceededError, match="wall-clock limit of 1s") as caught:
        await call_tool(ProcessEnvironment, "hang", {}, limits=limits)
    assert caught.value.resource == "wall_clock"


async def test_an_infinite_loop_ends_at_the_cpu_limit() -> None:
    limits = ProcessLimits(cpu_seconds=1, processes=None)
    with pytest.raises(LimitExceededError, match="CPU-time") as caught:
        await call_tool(ProcessEnvironment, "spin", {}, limits=limits)
    assert caught.value.resource == "cpu"


async def test_tools_that_require_isolation_are_refused() -> None:
    environment = ProcessEnvironment(RECIPE, provider=scripted("shell", {"command": "true"}))
    with pytest.raises(IsolationRequiredError, match="'shell' must run isolated"):
        await environment.run(TurnInput(message="go", trigger="user"), EnvironmentSpec())


async def test_a_network_restriction_is_refused_since_the_network_is_shared() -> None:
    spec = EnvironmentSpec(network=NetworkPolicy(default=NetworkAction.DENY, rules=[]))
    with pytest.raises(UnsupportedSpecError, match="network restriction"):
        await call_tool(ProcessEnvironment, "read_env", {"name": "X"}, spec=spec)


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds every user but root")
async def test_a_process_limit_is_refused_as_root() -> None:
    limits = ProcessLimits(processes=8)
    with pytest.raises(UnsupportedSpecError, match="RLIMIT_NPROC does not bind root"):
        await call_tool(ProcessEnvironment, "read_env", {"name": "X"}, limits=limits)


async def test_a_recipes_stop_tool_ends_the_childs_turn_with_its_result() -> None:
    provider = scripted("read_env", {"name": "MODE"})
    recipe = RECIPE.model_copy(update={"tools": ("read_env",), "stop_at_tools": ("read_env",)})
    environment = ProcessEnvironment(recipe, provider=provider, env={"MODE": "test"})

    output = await environment.run(TurnInput(message="go", trigger="user"), EnvironmentSpec())

    assert output.exit_reason == "complete" and output.message.as_text() == "test"
    assert len(provider.requests) == 1  # no model call after the stop tool


async def test_the_recipes_hosted_tools_reach_the_parents_provider_from_the_child() -> None:
    search = WebSearch(max_uses=1, allowed_domains=["docs.python.org"])
    provider = ScriptedProvider([text_response("found")], hosted_tools={"web_search"})
    recipe = RECIPE.model_copy(update={"tools": (), "hosted_tools": (search,)})
    output = await ProcessEnvironment(recipe, provider=provider).run(
        TurnInput(message="look it up", trigger="user"), EnvironmentSpec()
    )
    assert output.exit_reason == "complete"
    assert [request.hosted_tools for request in provider.requests] == [(search,)]


async def test_a_provider_without_the_recipes_hosted_tool_is_refused_before_the_child_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[object] = []
    monkeypatch.setattr(asyncio, "create_subprocess_exec", lambda *a, **k: started.append(a))
    provider = ScriptedProvider([text_response("never")])
    recipe = RECIPE.model_copy(update={"tools": (), "hosted_tools": (CodeExecution(),)})
    with pytest.raises(UnsupportedHostedToolError, match="does not run the hosted tool"):
        await ProcessEnvironment(recipe, provider=provider).run(
            TurnInput(message="run code", trigger="user"), EnvironmentSpec()
        )
    assert started == [] and provider.requests == []


async def test_the_recipes_thinking_reaches_the_parents_provider_and_is_checked_first() -> None:
    provider = ScriptedProvider([text_response("42")], takes_thinking=True)
    recipe = RECIPE.model_copy(update={"tools": (), "thinking": "high"})
    output = await ProcessEnvironment(recipe, provider=provider).run(
        TurnInput(message="think", trigger="user"), EnvironmentSpec()
    )
    assert output.exit_reason == "complete"
    assert [request.thinking for request in provider.requests] == ["high"]
    plain = ScriptedProvider([text_response("never")])
    with pytest.raises(UnsupportedThinkingError, match="does not take a thinking setting"):
        await ProcessEnvironment(recipe, provider=plain).run(
            TurnInput(message="think", trigger="user"), EnvironmentSpec()
        )
    assert plain.requests == []


async def test_a_strict_tool_of_the_recipe_reaches_the_parents_provider_strict() -> None:
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "strict_echo", {"text": "ab"})),
            text_response("done"),
        ],
        takes_strict_tools=True,
    )
    recipe = RECIPE.model_copy(update={"tools": ("strict_echo",)})

    output = await ProcessEnvironment(recipe, provider=provider).run(
        TurnInput(message="echo", trigger="user"), EnvironmentSpec()
    )

    assert output.exit_reason == "complete"
    offered = provider.requests[0].tools
    assert [(t.name, t.strict) for t in offered if t.name == "strict_echo"] == [
        ("strict_echo", True)
    ]
    result = provider.requests[1].messages[-1].content[0]
    assert getattr(result, "content", None) == "ab"


async def test_a_strict_tool_over_a_provider_without_strict_mode_is_refused_before_the_child_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[object] = []
    monkeypatch.setattr(asyncio, "create_subprocess_exec", lambda *a, **k: started.append(a))
    provider = ScriptedProvider([text_response("never")])
    recipe = RECIPE.model_copy(update={"tools": ("strict_echo",)})

    with pytest.raises(UnsupportedStrictToolsError, match="the tool\\(s\\) strict_echo ask"):
        await ProcessEnvironment(recipe, provider=provider).run(
            TurnInput(message="echo", trigger="user"), EnvironmentSpec()
        )

    assert started == [] and provider.requests == []


async def test_a_remote_mcp_call_the_provider_asks_about_pauses_the_sandboxed_turn() -> None:
    docs = HostedMCP("docs", "https://mcp.example.com/mcp", require_approval=True)
    asked = {"server": "docs", "tool": "delete_page", "arguments": {"page": 7}}
    provider = ScriptedProvider(
        [tool_call_response(ToolUsePart("hosted:mcpr_1", "mcp", asked))],
        hosted_tools=["mcp"],
        approves_hosted_calls=True,
    )
    recipe = RECIPE.model_copy(update={"tools": ("read_file",), "hosted_tools": (docs,)})

    output = await ProcessEnvironment(recipe, provider=provider).run(
        TurnInput(message="delete page 7", trigger="user"), EnvironmentSpec()
    )

    assert output.exit_reason == AWAITING_APPROVAL
    assert pending_approvals(output) == [
        PendingCall(id="hosted:mcpr_1", name="mcp", input=asked, hosted=True)
    ]
    assert provider.requests[0].hosted_tools == (docs,)
