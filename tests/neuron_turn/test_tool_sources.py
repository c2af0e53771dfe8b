"""A turn asks its tool sources for each run's tools, and treats them as its own."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from layer0 import TurnInput
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import FunctionTool, RunContext, ToolDyn, ToolSourceError, tool, tool_source
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    Decision,
    InvalidEditedInputError,
    NeuronTurn,
    NeuronTurnConfig,
    PluginManager,
    RegisterProvider,
    RegisterTool,
    ToolResultPart,
    UnknownStopToolError,
    UnsupportedStrictToolsError,
    hookimpl,
    resume_input,
)
from neuron_turn.plugins.errors import PluginHookError
from neuron_turn.testing import ScriptedProvider

from .support import answer, ask, call, calls


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool
def ban(user: str) -> str:
    """Ban a user."""
    return f"banned {user}"


@tool_source
def admin_tools(ctx: RunContext[dict[str, bool]]) -> list[ToolDyn]:
    return [ban] if ctx.deps["admin"] else []


def _turn(script: list[Any], tools: list[Any], **config: Any) -> tuple[NeuronTurn, Any]:
    provider = ScriptedProvider(script)
    settings = NeuronTurnConfig(model="m", **config)
    return NeuronTurn(provider, tools=tools, config=settings), provider


def _offered(provider: ScriptedProvider) -> list[str]:
    return [t.name for t in provider.requests[0].tools]


async def test_each_run_offers_the_tools_its_source_gives_for_that_runs_deps() -> None:
    turn, provider = _turn(
        [calls(call("c1", "ban", user="mallory")), answer("done"), answer("hello")],
        [lookup, admin_tools],
    )

    admin = await turn.execute(ask("ban mallory"), deps={"admin": True})
    guest = await turn.execute(ask("hi"), deps={"admin": False})

    assert admin.exit_reason == guest.exit_reason == "complete"
    assert [t.name for t in provider.requests[0].tools] == ["lookup", "ban"]
    ran = provider.requests[1].messages[-1].content[0]
    assert isinstance(ran, ToolResultPart) and ran.content == "banned mallory"
    assert [t.name for t in provider.requests[2].tools] == ["lookup"]
    assert turn.tools.names() == ["lookup"]  # the turn itself is unchanged


async def test_a_source_is_asked_again_each_run_so_a_changed_list_is_seen() -> None:
    listed: list[list[ToolDyn]] = [[lookup], [lookup, ban]]

    @tool_source
    def changing(ctx: RunContext[None]) -> list[ToolDyn]:
        return listed.pop(0)

    turn, provider = _turn([answer("one"), answer("two")], [changing])

    await turn.execute(ask())
    await turn.execute(ask())

    assert [[t.name for t in r.tools] for r in provider.requests] == [
        ["lookup"],
        ["lookup", "ban"],
    ]


async def test_a_call_to_a_tool_the_source_did_not_give_this_run_is_refused() -> None:
    turn, provider = _turn(
        [calls(call("c1", "ban", user="mallory")), answer("sorry")], [lookup, admin_tools]
    )

    await turn.execute(ask(), deps={"admin": False})

    refused = provider.requests[1].messages[-1].content[0]
    assert isinstance(refused, ToolResultPart) and refused.is_error
    assert "ban" in refused.content


async def test_a_failing_source_fails_the_run_before_any_model_call() -> None:
    @tool_source
    def down(ctx: RunContext[None]) -> list[ToolDyn]:
        raise ConnectionError("the server is gone")

    turn, provider = _turn([answer("never")], [lookup, down])

    with pytest.raises(ToolSourceError, match="'down' raised ConnectionError: the server is gone"):
        await turn.execute(ask())

    assert provider.requests == []


async def test_a_source_tool_taking_a_name_the_turn_has_fails_the_run_naming_the_source() -> None:
    @tool_source
    def shadow(ctx: RunContext[None]) -> list[ToolDyn]:
        return [FunctionTool(lambda key: key, name="lookup")]

    turn, provider = _turn([answer("never")], [lookup, shadow])

    with pytest.raises(ToolSourceError, match=r"'shadow' gave .*'lookup'"):
        await turn.execute(ask())

    assert provider.requests == []


async def test_a_stop_tool_may_come_from_a_source_and_is_checked_on_each_run() -> None:
    turn, _ = _turn(
        [calls(call("c1", "ban", user="mallory"))],
        [admin_tools],
        stop_at_tools=frozenset({"ban"}),
    )

    stopped = await turn.execute(ask(), deps={"admin": True})

    assert stopped.message.as_text() == "banned mallory"
    with pytest.raises(UnknownStopToolError, match="ban"):
        await turn.execute(ask(), deps={"admin": False})


async def test_a_strict_source_tool_over_a_provider_without_strict_mode_is_refused() -> None:
    strict = FunctionTool(lambda key: key, name="exact", strict=True)
    turn, provider = _turn([answer("never")], [tool_source(lambda ctx: [strict])])

    with pytest.raises(UnsupportedStrictToolsError, match="exact"):
        await turn.execute(ask())

    assert provider.requests == []


async def test_a_source_tool_held_for_approval_runs_as_the_resume_edits_it(
    tmp_path: Path,
) -> None:
    config = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["ban"]))
    admin = {"admin": True}
    async with SqliteStore(tmp_path / "s.db") as store:
        provider = ScriptedProvider([calls(call("c1", "ban", user="mallory")), answer("done")])
        turn = NeuronTurn(provider, tools=[admin_tools], state=store, config=config, deps=admin)
        orchestrator = LocalOrchestrator({"a": turn}, store)

        paused = await orchestrator.dispatch("a", ask("ban mallory", session="s"))
        bad = resume_input("s", [Decision.approve("c1", {"user": 5})])
        with pytest.raises(InvalidEditedInputError, match="schema"):
            await turn.check_resume(bad)  # checked against the source tool's schema
        edited = resume_input("s", [Decision.approve("c1", {"user": "eve"})])
        await turn.check_resume(edited)
        done = await orchestrator.dispatch("a", edited)

    assert paused.exit_reason == AWAITING_APPROVAL
    assert done.exit_reason == "complete"
    ran = provider.requests[1].messages[-1].content[0]
    assert isinstance(ran, ToolResultPart) and ran.content == "banned eve"


async def test_the_source_sees_the_runs_input_and_session() -> None:
    seen: list[tuple[str | None, str]] = []

    @tool_source
    def noting(ctx: RunContext[None]) -> list[ToolDyn]:
        assert isinstance(ctx.input, TurnInput)
        seen.append((ctx.session, ctx.input.message.as_text()))
        return []

    turn, _ = _turn([answer("ok")], [noting])

    await turn.execute(ask("hello", session="s1"))

    assert seen == [("s1", "hello")]


def test_a_turns_repr_names_its_sources() -> None:
    turn, _ = _turn([], [lookup, admin_tools])

    assert "tools=['lookup'], sources=[FunctionToolSource('admin_tools')]" in repr(turn)


def test_a_tool_source_a_plugin_registers_is_picked_by_its_name() -> None:
    model = ScriptedProvider([answer("hello")])

    class Plugin:
        @hookimpl
        def register_tools(self, register: RegisterTool) -> None:
            register(lookup)
            register(admin_tools)

        @hookimpl
        def register_providers(self, register: RegisterProvider) -> None:
            register("scripted", lambda model_name, **options: model)

    manager = PluginManager()
    manager.register(Plugin(), name="sources-plugin")
    turn = NeuronTurn.from_plugins(
        model="scripted:m", plugins=manager, tools=["lookup", "admin_tools"], context=None
    )

    asyncio.run(turn.execute(ask(), deps={"admin": True}))

    assert turn.tools.sources == (admin_tools,)
    assert [t.name for t in model.requests[0].tools] == ["lookup", "ban"]


def test_what_is_neither_a_tool_nor_a_named_source_is_refused_when_registered() -> None:
    class Nameless:
        async def tools_for(self, context: RunContext[Any]) -> list[ToolDyn]:
            return []

    class Plugin:
        @hookimpl
        def register_tools(self, register: RegisterTool) -> None:
            register(Nameless())  # type: ignore[arg-type]

    with pytest.raises(PluginHookError, match="has no `name` to be picked by"):
        PluginManager().register(Plugin(), name="nameless-plugin")
