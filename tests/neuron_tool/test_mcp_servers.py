"""`mcp_servers`: several servers' clients as a turn's tool sources, what `--mcp` now gives.

Against the changing server over stdio (MCP 2026-07-28 and 2025-11-25) and the
noisy peer's bare mode (one tool, `seen`), which a changed tool list can clash with.
"""

from __future__ import annotations

import shlex

import pytest

from layer0 import TurnInput
from neuron_tool.errors import MCPBridgeError, ToolSourceError
from neuron_tool.mcp import MCPClient, MCPConnectionError, mcp_servers
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .changes import Heard, names
from .mcp_servers.paths import script

CHANGING = shlex.join(script("changing"))
LEGACY = shlex.join([*script("changing"), "legacy"])
BARE = shlex.join([*script("noisy"), "bare"])


def ask(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user")


async def test_the_clients_come_connected_and_each_run_offers_a_tool_added_since(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heard = Heard(monkeypatch)
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "add_tool", {"name": "fresh"})),
            text_response("added"),
            text_response("seen"),
        ]
    )
    async with mcp_servers(commands=[LEGACY, BARE]) as clients:
        assert [client.name for client in clients] == ["changing.py", "noisy.py"]
        assert all(isinstance(client, MCPClient) for client in clients)
        turn = NeuronTurn(model, tools=clients, config=NeuronTurnConfig(model="m"))
        await turn.execute(ask("add a tool"))
        await heard.change("tools")
        await turn.execute(ask("what now?"))

    first, second = ({tool.name for tool in model.requests[i].tools} for i in (0, 2))
    assert {"add_tool", "seen"} <= first and "fresh" not in first
    assert second - first == {"fresh"}


async def test_two_servers_offering_one_name_are_refused_on_connecting() -> None:
    with pytest.raises(MCPBridgeError) as caught:
        async with mcp_servers(commands=[CHANGING, LEGACY]):
            pytest.fail("two servers offering the same tools were connected")

    assert "MCP servers 'changing.py' and 'changing.py' both offer a tool named" in str(
        caught.value
    )


async def test_a_tool_one_server_adds_under_anothers_name_fails_the_next_run_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heard = Heard(monkeypatch)
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "add_tool", {"name": "seen"})),
            text_response("added"),
        ]
    )
    async with mcp_servers(commands=[BARE, LEGACY]) as (bare, changing):
        turn = NeuronTurn(model, tools=[bare, changing], config=NeuronTurnConfig(model="m"))
        await turn.execute(ask("add a tool"))
        await heard.change("tools")
        assert "seen" in names(await changing.list_tools())
        with pytest.raises(ToolSourceError) as caught:
            await turn.execute(ask("and now?"))

    assert caught.value.source == "changing.py"
    assert "'seen'" in caught.value.reason
    assert len(model.requests) == 2  # the failed run asked the model nothing


async def test_a_server_that_cannot_start_fails_the_whole_set_and_an_empty_line_is_refused() -> (
    None
):
    with pytest.raises(MCPConnectionError, match="/nonexistent/server"):
        async with mcp_servers(commands=[LEGACY, "/nonexistent/server --flag"]):
            pass
    with pytest.raises(ValueError, match="empty"):
        async with mcp_servers(commands=["  "]):
            pass
