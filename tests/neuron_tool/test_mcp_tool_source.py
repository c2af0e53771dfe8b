"""An MCP client among a turn's tools is a tool source: each run offers the server's tools now."""

from __future__ import annotations

import pytest

from layer0 import TurnInput
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolResultPart, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .changes import TRANSPORTS, Heard, changing, counts


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_run_after_the_server_added_a_tool_offers_it_and_runs_it(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    heard = Heard(monkeypatch)
    async with changing(transport) as client:
        model = ScriptedProvider(
            [
                tool_call_response(ToolUsePart("c1", "add_tool", {"name": "fresh"})),
                text_response("added"),
                tool_call_response(ToolUsePart("c2", "fresh", {})),
                text_response("ran it"),
            ]
        )
        turn = NeuronTurn(model, tools=[client], config=NeuronTurnConfig(model="m"))

        await turn.execute(TurnInput(message="add a tool", trigger="user"))
        await heard.change("tools")
        await turn.execute(TurnInput(message="use it", trigger="user"))
        listed = (await counts(client))["tools/list"]

    first, second = ({t.name for t in model.requests[i].tools} for i in (0, 2))
    assert "add_tool" in first and "fresh" not in first
    assert second - first == {"fresh"}
    ran = model.requests[3].messages[-1].content[0]
    assert isinstance(ran, ToolResultPart) and not ran.is_error and ran.content == "fresh"
    assert listed == 2  # once on connecting, once after the change: runs share the cache
