"""An MCP server's tools through views: a few of them, under a prefix, over a real stdio server."""

from __future__ import annotations

from neuron_tool import each_step, filtered_tools, prefixed_tools
from neuron_turn import NeuronTurn, ToolResultPart, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ..neuron_turn.support import ask
from .changes import changing


async def test_a_filtered_prefixed_server_offers_its_allowed_tools_prefixed_and_calls_its_own() -> (
    None
):
    # Listed anew each run, so the test needs no change notice to see the added tool.
    async with changing("stdio", cache_lists=False) as client:
        model = ScriptedProvider(
            [
                tool_call_response(
                    ToolUsePart("c1", "srv_echo", {"text": "hi"}),
                    ToolUsePart("c2", "srv_add_tool", {"name": "fresh"}),
                    ToolUsePart("c3", "add_tool", {"name": "fresh"}),
                ),
                text_response("one"),
                tool_call_response(ToolUsePart("c4", "srv_fresh", {})),
                text_response("two"),
            ]
        )
        allowed = filtered_tools(client, allow=["echo", "fresh"])
        turn = NeuronTurn(model, tools=[prefixed_tools(allowed, "srv_")])

        await turn.execute(ask("echo"))
        added = "fresh" in {t.name for t in await client.list_tools()}
        await client.call_tool("add_tool", {"name": "fresh"})  # as the server's admin would
        await turn.execute(ask("again"))

    first, second = ([t.name for t in model.requests[i].tools] for i in (0, 2))
    assert first == ["srv_echo"] and second == ["srv_echo", "srv_fresh"]
    echo, *refused = (p for p in model.requests[1].messages[-1].content)
    assert isinstance(echo, ToolResultPart) and echo.content == "hi" and not echo.is_error
    assert all(isinstance(p, ToolResultPart) and p.is_error for p in refused)
    assert not added  # neither the blocked tool nor its own name reached the server
    ran = model.requests[3].messages[-1].content[0]
    assert isinstance(ran, ToolResultPart) and ran.content == "fresh" and not ran.is_error


async def test_a_server_asked_each_step_offers_a_tool_its_own_call_added_in_the_same_run() -> None:
    async with changing("stdio", cache_lists=False) as client:
        model = ScriptedProvider(
            [
                tool_call_response(ToolUsePart("c1", "add_tool", {"name": "fresh"})),
                tool_call_response(ToolUsePart("c2", "fresh", {})),
                text_response("used it"),
            ]
        )
        turn = NeuronTurn(
            model, tools=[each_step(filtered_tools(client, allow=["add_tool", "fresh"]))]
        )

        done = await turn.execute(ask("add a tool and use it"))

    assert done.exit_reason == "complete"
    offered = [[t.name for t in request.tools] for request in model.requests]
    assert offered == [["add_tool"], ["add_tool", "fresh"], ["add_tool", "fresh"]]
    ran = model.requests[2].messages[-1].content[0]
    assert isinstance(ran, ToolResultPart) and ran.content == "fresh" and not ran.is_error
