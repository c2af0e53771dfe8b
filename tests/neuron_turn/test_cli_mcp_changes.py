"""`neuron-turn chat --mcp` / `--mcp-url`: each answer offers the servers' tools of the moment.

The command line gives the turn its MCP clients as tool sources, so a chat (one
turn, many answers, one process) offers a tool a server added since the last
answer. `main` runs in this process, against the changing test server over stdio
(MCP 2026-07-28 and 2025-11-25) and loopback HTTP. The model is a scripted one a
plugin of the test's own registers: in the first answer it calls `add_tool`, and
before answering again it waits until the command line's client heard the server
say its tools changed (an event, never a pause); in the second it calls the new tool.
"""

from __future__ import annotations

import io
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from typing import Any

import pytest

from neuron_tool import ToolRegistry, tool
from neuron_tool.mcp import MCPClient, serve_http
from neuron_turn import (
    ProviderRequest,
    ProviderResponse,
    ProviderStreamEvent,
    RegisterProvider,
    ToolResultPart,
    ToolUsePart,
    hookimpl,
)
from neuron_turn.cli import main
from neuron_turn.cli._closing import close_resource
from neuron_turn.cli._errors import EXIT_TOOL_SOURCE
from neuron_turn.cli._run import TurnSpec, build_turn, offered_tools
from neuron_turn.cli._state_option import open_state_store
from neuron_turn.plugins import get_plugin_manager
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response
from tests.neuron_tool.changes import Heard
from tests.neuron_tool.mcp_servers.changing import Changing
from tests.neuron_tool.mcp_servers.paths import script
from tests.neuron_tool.mcp_servers.served import TOKEN, served_over_http
from tests.serving import running, running_in_thread

pytestmark = pytest.mark.usefixtures("fixture_plugins")


class HearingModel(ScriptedProvider):
    """A scripted model whose second answer waits until a client heard the tools change."""

    def __init__(self, heard: Heard, tool: str) -> None:
        super().__init__(
            [
                tool_call_response(ToolUsePart("c1", "add_tool", {"name": tool})),
                text_response("added"),
                tool_call_response(ToolUsePart("c2", tool, {})),
                text_response("ran it"),
            ]
        )
        self.heard = heard

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        await self._after_the_change()
        return await super().complete(request)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        await self._after_the_change()
        async for event in super().stream(request):
            yield event

    async def _after_the_change(self) -> None:
        if len(self.requests) == 1:  # add_tool has run: the change is on its way
            await self.heard.change("tools")


class ModelPlugin:
    """Registers `hearing:<any>`, the one model of the test."""

    def __init__(self, model: HearingModel) -> None:
        self.model = model

    @hookimpl
    def register_providers(self, register: RegisterProvider) -> None:
        register("hearing", self._make)

    def _make(self, model: str, **options: Any) -> HearingModel:
        return self.model


@pytest.fixture(scope="module")
def changing_url() -> Iterator[str]:
    """The changing server over loopback HTTP, on a loop of its own thread (`main` has its own)."""
    with running_in_thread(lambda: served_over_http(Changing().server())) as url:
        yield url


def server_flags(transport: str, request: pytest.FixtureRequest) -> list[str]:
    if transport == "http":
        url: str = request.getfixturevalue("changing_url")
        request.getfixturevalue("monkeypatch").setenv("CHANGING_TOKEN", TOKEN)
        return ["--mcp-url", url, "--mcp-token-env", "CHANGING_TOKEN"]
    legacy = ["legacy"] if transport == "legacy" else []
    return ["--mcp", shlex.join([*script("changing"), *legacy])]


@pytest.mark.parametrize("transport", ["stdio", "legacy", "http"])
def test_a_chat_offers_in_its_next_answer_a_tool_the_server_added_during_the_last(
    transport: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = f"fresh_{transport}"  # the HTTP server lives on: a name no other test added
    model = HearingModel(Heard(monkeypatch), name)
    get_plugin_manager().register(ModelPlugin(model), name="hearing-model")
    monkeypatch.setattr("sys.stdin", io.StringIO("add a tool\nuse it\n"))

    code = main(["chat", "--model", "hearing:m", *server_flags(transport, request)])

    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.splitlines() == ["added", "ran it"]
    first, second = ({tool.name for tool in model.requests[i].tools} for i in (0, 2))
    assert "add_tool" in first and name not in first
    assert second - first == {name}
    (ran,) = model.requests[3].messages[-1].content
    assert isinstance(ran, ToolResultPart) and not ran.is_error
    assert ran.content == name


@tool(name="fixture_add")
async def remote_add(a: int, b: int) -> str:
    """Add two numbers, on the MCP server: named as the fixture plugin's tool is."""
    return f"{a + b} (from the MCP server)"


@pytest.fixture(scope="module")
def adding_url() -> Iterator[str]:
    """A server offering `fixture_add` over loopback HTTP, on a loop of its own thread."""
    registry = ToolRegistry([remote_add])

    def serve(ready: Callable[[str], object]) -> Awaitable[None]:
        return serve_http(registry, port=0, token=TOKEN, on_ready=ready)

    with running_in_thread(lambda: running(serve)) as url:
        yield url


def test_a_servers_tool_named_as_a_plugin_tool_is_refused_at_the_start_naming_the_server(
    adding_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ADDING_TOKEN", TOKEN)
    argv = ["run", "add", "--model", "fixture:tool", "--tool", "fixture_add"]

    code = main([*argv, "--mcp-url", adding_url, "--mcp-token-env", "ADDING_TOKEN"])

    out, err = capsys.readouterr()
    assert code == EXIT_TOOL_SOURCE
    assert out == ""  # refused before the model was asked
    assert err.count("\n") == 1
    assert err.startswith(f"neuron-turn: error: tool source {adding_url!r} gave ")
    assert "'fixture_add'" in err and "already registered" in err


async def test_offered_tools_are_the_turns_own_and_the_servers_of_the_moment() -> None:
    manager = get_plugin_manager()
    spec = TurnSpec(
        model="fixture:echo",
        tools=["fixture_add"],
        mcp_commands=[shlex.join([*script("changing"), "legacy"])],
    )
    async with AsyncExitStack() as stack:
        store = open_state_store(None, manager=manager)
        stack.push_async_callback(close_resource, store)
        turn, _ = await build_turn(stack, manager, spec, store)
        (client,) = turn.tools.sources
        assert isinstance(client, MCPClient)
        before = (await offered_tools(turn, "s1")).names()
        await client.call_tool("add_tool", {"name": "fresh"})  # legacy: told before it answers
        after = (await offered_tools(turn, "s1")).names()

    assert turn.tools.names() == ["fixture_add"]  # the servers' tools come per run
    assert before[0] == "fixture_add" and {"add_tool", "echo"} <= set(before)
    assert set(after) - set(before) == {"fresh"}


def test_a_chat_lists_and_stops_at_its_servers_tools(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("/tools\n"))
    server = ["--mcp", shlex.join([*script("changing"), "legacy"])]

    code = main(["chat", "--model", "fixture:echo", *server, "--stop-at-tool", "echo"])

    _, err = capsys.readouterr()
    assert code == 0, err  # a server's tool is one to stop at
    listed = [line.strip().split(":")[0] for line in err.splitlines() if line.startswith("  ")]
    assert {"add_tool", "echo"} <= set(listed)


def test_tools_in_a_chat_lists_a_tool_the_server_added_since_the_chat_began(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = HearingModel(Heard(monkeypatch), "fresh_listed")
    get_plugin_manager().register(ModelPlugin(model), name="hearing-model")
    monkeypatch.setattr("sys.stdin", io.StringIO("/tools\nadd a tool\n/tools\n"))
    server = ["--mcp", shlex.join([*script("changing"), "legacy"])]

    code = main(["chat", "--model", "hearing:m", *server])

    _, err = capsys.readouterr()
    assert code == 0, err
    # Two listings, the tool in the second alone: added between them.
    assert (err.count("  add_tool: "), err.count("  fresh_listed: ")) == (2, 1)
