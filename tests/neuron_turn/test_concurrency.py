"""One NeuronTurn runs many turns at once with no shared mutable state."""

from __future__ import annotations

import asyncio

from neuron_tool import ToolRegistry
from neuron_turn import NeuronTurn, ProviderRequest, ProviderResponse, ToolResultPart
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response

from .support import add, ask, call


def _respond(request: ProviderRequest) -> ProviderResponse:
    results = [p for m in request.messages for p in m.content if isinstance(p, ToolResultPart)]
    first = request.messages[0].content[0]
    who = first.text  # type: ignore[union-attr]
    if len(results) < 3:
        return tool_call_response(call(f"{who}-{len(results)}", "add", a=len(results), b=1))
    return text_response(f"{who}:{','.join(r.content for r in results)}")


async def test_one_instance_runs_many_turns_concurrently_without_mixing_them() -> None:
    turn = NeuronTurn(FunctionProvider(_respond), tools=ToolRegistry([add]))
    outputs = await asyncio.gather(*(turn.execute(ask(f"user{i}")) for i in range(50)))
    for i, output in enumerate(outputs):
        assert output.message.as_text() == f"user{i}:1,2,3"
        assert output.metadata.turns_used == 4
        assert len(output.metadata.tools_called) == 3
