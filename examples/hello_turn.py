"""Build a TurnInput, execute a NeuronTurn over a scripted model, print the TurnOutput JSON.

No API key or network: the model is `neuron_turn.testing.FunctionProvider`,
which here asks for the `add` tool once and then answers with its result.
"""

from __future__ import annotations

import asyncio

from layer0 import TurnInput
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, ProviderRequest, ProviderResponse, ToolResultPart, ToolUsePart
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def model(request: ProviderRequest) -> ProviderResponse:
    results = [p for m in request.messages for p in m.content if isinstance(p, ToolResultPart)]
    if not results:
        return tool_call_response(ToolUsePart("call_1", "add", {"a": 17, "b": 25}))
    return text_response(f"17 + 25 = {results[-1].content}")


async def main() -> None:
    turn = NeuronTurn(FunctionProvider(model), tools=ToolRegistry([add]))
    output = await turn.execute(TurnInput(message="What is 17 + 25?", trigger="user"))
    print(output.model_dump_json(indent=2))


if __name__ == "__main__":
    asyncio.run(main())
